// A parameter sweep: the top-level `sweep:` block of a config (grid keys crossed, zip groups varied
// together, the special key `ranks`) expanded into named points, each validated as a full config.
#pragma once

#include <string>
#include <vector>

namespace ft {

// One run of a sweep: the base config plus `overrides` ("key=value" as for --set), on `ranks` ranks.
struct SweepPoint {
  std::size_t index = 0;
  std::string name;  // stable and file-name safe, e.g. p003-batch_size=64-ranks=2
  std::vector<std::string> overrides;
  int ranks = 1;
};

struct Sweep {
  std::string origin;                // the file the sweep came from
  std::string base_yaml;             // that file without its sweep: block: what `fusetrain train` reads
  std::vector<std::string> keys;     // config keys that take more than one value, in declaration order
  std::vector<SweepPoint> points;    // the first key varies slowest, the last fastest
  int max_ranks() const;
};

// Parses `yaml` (the text of a config with a sweep: block; `origin` names it in messages) and checks
// every point with parse_config. Errors name origin:line:column and the key at fault.
// `sets` ("key=value", as for --set) apply to every point: they follow the point's own overrides, may
// not name a swept key or output.*, and `ranks=N` sets the ranks of every point of a sweep that does
// not vary them.
Sweep parse_sweep(const std::string& yaml, const std::string& origin, const std::vector<std::string>& sets = {});
Sweep load_sweep(const std::string& path, const std::vector<std::string>& sets = {});

}  // namespace ft
