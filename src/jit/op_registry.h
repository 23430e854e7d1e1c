// The registry of operation kinds by name: what ties the families of src/jit/ops/ together for
// the one place that starts from a name, reading a program's text back (program_parse.h). Each
// family registers its kinds from its own file with a static OperationRegistration, so a new
// family touches one file. Thread-safe.
// Open to lib/: a library registers its operations' names, as ops/ does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jit/operation.h"
#include "spmd/mesh.h"
#include "spmd/partition_spec.h"

namespace spmd::compiler {

// The attributes of one operation in a program's text ("axes={0,1} sharding=PartitionSpec('a',)"),
// with the types the line declares, for a family's parser. Every getter throws InvalidArgument
// naming the operation and the attribute when it is missing or malformed.
class AttributeReader {
 public:
  AttributeReader(std::string op, std::map<std::string, std::string> values, ValueType result,
                  std::vector<ValueType> operands, const Mesh& mesh);

  const std::string& op() const { return op_; }
  // The type the line declares for the result, and its operands' types.
  const ValueType& result() const { return result_; }
  const std::vector<ValueType>& operands() const { return operands_; }
  // The mesh the program's shardings are on.
  const Mesh& mesh() const { return mesh_; }

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::string& text(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  // "true" or "false"; `absent` when the line leaves the attribute out.
  bool boolean(const std::string& key, bool absent) const;
  // "{0,1}"
  std::vector<int64_t> integers(const std::string& key) const;
  // "PartitionSpec('a', None)", as PartitionSpec::to_string() prints it.
  PartitionSpec spec(const std::string& key) const;

 private:
  [[noreturn]] void refuse(const std::string& key, const std::string& why) const;

  std::string op_;
  std::map<std::string, std::string> values_;
  ValueType result_;
  std::vector<ValueType> operands_;
  const Mesh& mesh_;
};

// "PartitionSpec('a', None)", as PartitionSpec::to_string() prints it; throws InvalidArgument
// saying what is wrong ("has a malformed entry: …").
PartitionSpec parse_partition_spec(std::string_view text);

using OperationParser = std::function<std::shared_ptr<const Operation>(const AttributeReader&)>;

// Registers the kind printed as `name`. Throws InvalidArgument when the name is taken.
void register_operation(std::string_view name, OperationParser parse);
// The parser of `name`; null when no family registered it.
const OperationParser* find_operation(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> operation_names();

// Registers at static initialisation, from the family's own file.
struct OperationRegistration {
  OperationRegistration(std::string_view name, OperationParser parse) {
    register_operation(name, std::move(parse));
  }
};

}  // namespace spmd::compiler
