// The declarative table of configuration keys: one entry per YAML key, bound to its Config field, with
// help text and a validator. Loading, dumping and the reference text are all generated from this table.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/schema.h"

namespace ft {

struct Option {
  std::string key;    // dotted path, e.g. "optimizer.lr"
  std::string type;   // shown in the reference: int, float, bool, string, list
  std::string help;
  // Reads node into the bound field; `where` is its place for messages. Throws ConfigError.
  std::function<void(const YAML::Node& node, const ConfigPlace& where)> read;
  std::function<YAML::Node()> value;  // current value of the bound field
};

// The table bound to the fields of `config` (which must outlive it).
std::vector<Option> option_table(Config& config);

}  // namespace ft
