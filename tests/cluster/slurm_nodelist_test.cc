#include "cluster/slurm_nodelist.h"

#include <gtest/gtest.h>

#include "spmd/error.h"

namespace spmd {
namespace {

using Hosts = std::vector<std::string>;

TEST(SlurmNodelist, EveryFormExpandsAsSlurmWritesIt) {
  EXPECT_EQ(expand_slurm_hosts("node001", "V"), Hosts{"node001"});
  EXPECT_EQ(expand_slurm_hosts("a,b", "V"), (Hosts{"a", "b"}));
  EXPECT_EQ(expand_slurm_hosts("node[001-003]", "V"), (Hosts{"node001", "node002", "node003"}));
  EXPECT_EQ(expand_slurm_hosts("node[001,007-009]", "V"),
            (Hosts{"node001", "node007", "node008", "node009"}));
  EXPECT_EQ(expand_slurm_hosts("rack[1-2]-node[01-02]", "V"),
            (Hosts{"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}));
  EXPECT_EQ(expand_slurm_hosts("gpu[9-11],login", "V"), (Hosts{"gpu9", "gpu10", "gpu11", "login"}));
  EXPECT_EQ(expand_slurm_hosts("n[098-100]", "V"), (Hosts{"n098", "n099", "n100"}));
}

TEST(SlurmNodelist, TheFirstHostKeepsZeroPadding) {
  EXPECT_EQ(first_slurm_host("node[001-015]", "V"), "node001");
  EXPECT_EQ(first_slurm_host("rack[1-2]-node[01-04]", "V"), "rack1-node01");
  EXPECT_EQ(first_slurm_host("b[7,3],a", "V"), "b7");
  EXPECT_EQ(first_slurm_host("node[0000001-9999999]", "V"), "node0000001");  // not expanded
}

TEST(SlurmNodelist, MalformedListsNameTheVariableAndTheValue) {
  for (const char* bad : {"", "node[", "node[3-1]", "node]", "node[]", "node[1-]", "node[a-b]",
                          "a,,b", "node[1[2]]", "node 1", ",a"}) {
    try {
      first_slurm_host(bad, "SLURM_STEP_NODELIST");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("SLURM_STEP_NODELIST='") + bad + "'"), std::string::npos)
          << msg;
    }
  }
}

TEST(SlurmNodelist, ExpansionIsBounded) {
  EXPECT_THROW(expand_slurm_hosts("n[1-100]", "V", 10), InvalidArgument);
}

}  // namespace
}  // namespace spmd
