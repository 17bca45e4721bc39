// Loads a run's YAML configuration (plus --set overrides) into the typed Config, validating every key:
// unknown keys get the nearest valid one suggested, bad values name the key and where it was written.
#pragma once

#include <string>
#include <vector>

#include "config/schema.h"

namespace ft {

struct LoadOptions {
  bool allow_sweep_block = false;  // `fusetrain sweep` reads files that carry a top-level sweep: block
};

// path: YAML file; overrides: "section.key=value" strings (value parsed as YAML). A bad key or value
// throws ConfigError (config_error.h), whose fields say where it was written.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                   const LoadOptions& options = {});
// The same from YAML text; `origin` names the text in messages.
Config parse_config(const std::string& yaml, const std::string& origin,
                    const std::vector<std::string>& overrides = {}, const LoadOptions& options = {});

// The resolved configuration as YAML: parse_config(dump_config(c)) == c.
std::string dump_config(const Config& config);

// Every key with its type, default and help text, for `fusetrain train --help-config`.
std::string config_reference();

// Checks between keys that no single key can check (e.g. nccl needs CUDA, fp16 needs CUDA).
// `cuda_available` is whether this process can use a CUDA device.
// `why_not` says why it cannot, for the message when train.device is cuda.
void validate_for_device(const Config& config, bool cuda_available, const std::string& why_not = "");

// Edit distance, exposed for tests of the "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace ft
