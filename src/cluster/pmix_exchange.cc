#include "cluster/pmix_exchange.h"

#include <fmt/format.h>

#include <cstdlib>

#include "spmd/error.h"

#ifdef SPMD_HAVE_PMIX
#include <pmix.h>
#endif

namespace spmd {

#ifdef SPMD_HAVE_PMIX

bool pmix_available() {
  for (const char* v : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                        "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

std::string pmix_exchange_from_rank0(const std::string& key, const std::string& value,
                                     std::chrono::milliseconds timeout) {
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    throw Error(fmt::format("PMIx_Init failed: {}", PMIx_Error_string(rc)));
  }
  // Every exit path finalizes: PMIx counts Init/Finalize pairs, so an MPI library initialising
  // PMIx later in this process is unaffected.
  struct Finalize {
    ~Finalize() { PMIx_Finalize(nullptr, 0); }
  } finalize;

  if (me.rank == 0) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = const_cast<char*>(value.c_str());
    rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
    if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
      throw Error(fmt::format("publishing the coordinator address through PMIx failed: {}",
                              PMIx_Error_string(rc)));
    }
  }
  // A fence with data collection makes rank 0's value visible everywhere; its timeout bounds
  // the wait for a rank 0 that never arrives.
  pmix_info_t info[2];
  bool collect = true;
  int seconds = static_cast<int>(std::max<int64_t>(1, (timeout.count() + 999) / 1000));
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  rc = PMIx_Fence(nullptr, 0, info, 2);
  if (rc == PMIX_ERR_TIMEOUT) {
    throw DeadlineExceeded(fmt::format(
        "not every rank reached the PMIx exchange of the coordinator address within {} s",
        seconds));
  }
  if (rc != PMIX_SUCCESS) {
    throw Error(fmt::format("the PMIx fence failed: {}", PMIx_Error_string(rc)));
  }
  pmix_proc_t root;
  PMIX_LOAD_PROCID(&root, me.nspace, 0);
  pmix_value_t* got = nullptr;
  rc = PMIx_Get(&root, key.c_str(), nullptr, 0, &got);
  if (rc != PMIX_SUCCESS || got == nullptr || got->type != PMIX_STRING ||
      got->data.string == nullptr) {
    if (got != nullptr) PMIX_VALUE_RELEASE(got);
    throw Error(fmt::format("reading rank 0's coordinator address through PMIx failed: {}",
                            PMIx_Error_string(rc)));
  }
  std::string out = got->data.string;
  PMIX_VALUE_RELEASE(got);
  return out;
}

#else

bool pmix_available() { return false; }

std::string pmix_exchange_from_rank0(const std::string&, const std::string&,
                                     std::chrono::milliseconds) {
  throw Error("this spmd build has no PMIx support (Debian: libpmix-dev)");
}

#endif

}  // namespace spmd
