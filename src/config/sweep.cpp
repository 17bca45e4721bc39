// Reads the sweep: block into axes (one per grid key, one per zip group), crosses them into points and
// validates each value and each point through parse_config, so a sweep never plans a run that cannot start.
#include "config/sweep.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "config/config_error.h"
#include "config/loader.h"
#include "config/options.h"
#include "io/text_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

const char* const kRanks = "ranks";  // the number of MPI ranks: a sweep key that is not a config key
const char* const kLabel = "label";  // names the settings of a zip group instead of their values

// One factor of the cartesian product: a grid key, or a zip group whose keys take their i-th values
// together. columns[k][i] is the i-th value of keys[k].
struct Axis {
  std::vector<std::string> keys;
  std::vector<YAML::Mark> key_marks;
  std::vector<std::vector<YAML::Node>> columns;
  std::vector<std::string> labels;  // empty unless the group has a `label` list
  std::size_t size() const { return columns.empty() ? labels.size() : columns.front().size(); }
};

class SweepReader {
 public:
  SweepReader(const std::string& yaml, const std::string& origin, const std::vector<std::string>& sets)
      : yaml_(yaml), origin_(origin) {
    for (const auto& set : sets) {
      const std::size_t eq = set.find('=');
      FT_REQUIRE(eq != std::string::npos && eq > 0, "--set ", set, ": expected key=value");
      const std::string key = set.substr(0, eq);
      FT_REQUIRE(key != "output" && key.rfind("output.", 0) != 0, "--set ", set,
                 ": every point's output.dir and output.name are set by the sweep");
      if (key == kRanks)
        ranks_set_text_ = set;
      else
        sets_.push_back(set);
    }
  }

  Sweep read() {
    YAML::Node doc;
    try {
      doc = YAML::Load(yaml_);
    } catch (const YAML::ParserException& e) {
      throw Error(cat(origin_, ":", e.mark.line + 1, ":", e.mark.column + 1, ": malformed YAML: ", e.msg));
    }
    FT_REQUIRE(doc.IsMap(), origin_, ": expected a map of sections with a top-level sweep: block");
    YAML::Node block;
    YAML::Mark block_mark;
    bool found = false;
    for (const auto& kv : doc)
      if (kv.first.Scalar() == "sweep") block = kv.second, block_mark = kv.first.Mark(), found = true;
    FT_REQUIRE(found, origin_, ": no top-level sweep: block (e.g. sweep: {grid: {data.batch_size: [32, 64]}})");
    FT_REQUIRE(block.IsMap(), where(block_mark), ": sweep: expected a map with grid: and/or zip:");

    check_base();
    for (const auto& kv : block) {
      const std::string part = kv.first.Scalar();
      if (part == "grid") {
        read_grid(kv.second, kv.first.Mark());
      } else if (part == "zip") {
        read_zips(kv.second, kv.first.Mark());
      } else {
        throw Error(cat(where(kv.first.Mark()), ": unknown key 'sweep.", part, "' (valid: sweep.grid, sweep.zip)"));
      }
    }
    FT_REQUIRE(!axes_.empty(), where(block_mark), ": sweep: lists no keys; add grid: or zip:");
    check_sets();

    Sweep sweep;
    sweep.origin = origin_;
    sweep.base_yaml = without_sweep_block(doc);
    for (const auto& axis : axes_)
      if (axis.size() > 1)
        for (const auto& key : axis.keys)
          if (key != kRanks) sweep.keys.push_back(key);
    expand(sweep);
    return sweep;
  }

 private:
  std::string where(const YAML::Mark& mark) const {
    return cat(origin_, ":", mark.line + 1, ":", mark.column + 1);
  }

  // The point's overrides, then every --set.
  std::vector<std::string> with_sets(std::vector<std::string> overrides) const {
    overrides.insert(overrides.end(), sets_.begin(), sets_.end());
    return overrides;
  }

  Config parse(const std::vector<std::string>& overrides) const {
    LoadOptions options;
    options.allow_sweep_block = true;
    return parse_config(yaml_, origin_, with_sets(overrides), options);
  }

  // A --set of a swept key would silently flatten the sweep; --set ranks=N must be a positive whole number
  // and is kept for expand().
  void check_sets() {
    for (const auto& set : sets_) {
      const std::string key = set.substr(0, set.find('='));
      for (const auto& swept : seen_)
        FT_REQUIRE(swept != key && key.rfind(swept + ".", 0) != 0 && swept.rfind(key + ".", 0) != 0, "--set ", set,
                   ": key '", swept, "' is swept by ", origin_, "; drop the --set or the sweep key");
    }
    if (ranks_set_text_.empty()) return;
    FT_REQUIRE(!seen_.count(kRanks), "--set ", ranks_set_text_, ": key 'ranks' is swept by ", origin_,
               "; drop the --set or the sweep key");
    const std::string value = ranks_set_text_.substr(ranks_set_text_.find('=') + 1);
    const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    ranks_set_ = digits && value.size() < 7 ? std::stoi(value) : 0;
    FT_REQUIRE(ranks_set_ >= 1, "--set ", ranks_set_text_, ": expected a positive whole number of MPI ranks");
  }

  // The config without any sweep value must load: its own errors already name file, line and key.
  void check_base() const { parse({}); }

  void read_grid(const YAML::Node& grid, const YAML::Mark& mark) {
    FT_REQUIRE(grid.IsMap(), where(mark), ": sweep.grid: expected a map of key: [values]");
    for (const auto& kv : grid) {
      Axis axis;
      add_key(axis, kv.first, kv.second, "sweep.grid", true);
      axes_.push_back(std::move(axis));
    }
  }

  // zip: is one group (a map) or several (a list of maps); each group's lists have one length.
  void read_zips(const YAML::Node& zip, const YAML::Mark& mark) {
    if (zip.IsMap()) return read_zip(zip, mark, "sweep.zip");
    FT_REQUIRE(zip.IsSequence(), where(mark), ": sweep.zip: expected a map of key: [values] or a list of such maps");
    for (std::size_t g = 0; g < zip.size(); ++g) {
      FT_REQUIRE(zip[g].IsMap(), where(zip[g].Mark()), ": sweep.zip[", g, "]: expected a map of key: [values]");
      read_zip(zip[g], zip[g].Mark(), cat("sweep.zip[", g, "]"));
    }
  }

  void read_zip(const YAML::Node& group, const YAML::Mark& mark, const std::string& label) {
    Axis axis;
    for (const auto& kv : group) {
      if (kv.first.Scalar() == kLabel) {
        FT_REQUIRE(kv.second.IsSequence() && kv.second.size() > 0, where(kv.first.Mark()), ": ", label,
                   ".label: expected a list of names, one per setting");
        for (const auto& name : kv.second) {
          FT_REQUIRE(name.IsScalar() && !safe_name(name.Scalar()).empty(), where(name.Mark()), ": ", label,
                     ".label: expected a short name");
          axis.labels.push_back(safe_name(name.Scalar()));
        }
      } else {
        add_key(axis, kv.first, kv.second, label, false);
      }
    }
    FT_REQUIRE(!axis.keys.empty(), where(mark), ": ", label, ": lists no keys");
    const std::size_t n = axis.columns.front().size();
    for (std::size_t k = 0; k < axis.keys.size(); ++k)
      FT_REQUIRE(axis.columns[k].size() == n, where(axis.key_marks[k]), ": ", label, " key '", axis.keys[k],
                 "' has ", axis.columns[k].size(), " values but '", axis.keys[0], "' has ", n,
                 ": zipped keys need lists of the same length");
    FT_REQUIRE(axis.labels.empty() || axis.labels.size() == n, where(mark), ": ", label, ".label has ",
               axis.labels.size(), " names for ", n, " settings");
    axes_.push_back(std::move(axis));
  }

  void add_key(Axis& axis, const YAML::Node& key_node, const YAML::Node& values, const std::string& label,
               bool scalar_allowed) {
    const std::string key = key_node.Scalar();
    const YAML::Mark mark = key_node.Mark();
    FT_REQUIRE(key != kLabel, where(mark), ": ", label, ": 'label' names the settings of a zip group only");
    FT_REQUIRE(key != "output" && key.rfind("output.", 0) != 0 && key != "sweep", where(mark), ": ", label,
               ": '", key, "' cannot be swept: every point's output.dir and output.name are set by the sweep");
    FT_REQUIRE(seen_.insert(key).second, where(mark), ": ", label, ": key '", key, "' is swept twice");
    std::vector<YAML::Node> column;
    if (values.IsSequence()) {
      FT_REQUIRE(values.size() > 0, where(mark), ": ", label, " key '", key, "': empty list of values");
      for (const auto& v : values) column.push_back(v);
    } else {
      FT_REQUIRE(scalar_allowed && values.IsScalar(), where(mark), ": ", label, " key '", key,
                 "': expected a list of values, e.g. [16, 32]");
      column.push_back(values);
    }
    if (key == kRanks) {
      for (const auto& v : column) check_ranks(v, label);
    } else {
      check_config_key(key, mark, column.front());
      for (const auto& v : column) check_value(key, v);
    }
    axis.keys.push_back(key);
    axis.key_marks.push_back(mark);
    axis.columns.push_back(std::move(column));
  }

  void check_ranks(const YAML::Node& v, const std::string& label) const {
    int ranks = 0;
    try {
      ranks = v.IsScalar() && v.Scalar().find_first_of(".eE") == std::string::npos ? v.as<int>() : 0;
    } catch (const YAML::Exception&) {
      ranks = 0;
    }
    FT_REQUIRE(ranks >= 1, where(v.Mark()), ": ", label, " key 'ranks': expected a positive whole number of "
               "MPI ranks, got '", v.IsScalar() ? v.Scalar() : std::string("a ") + (v.IsMap() ? "map" : "list"), "'");
  }

  // A key is valid when it names an option or a section of options; parse_config's message for an
  // unknown one suggests the nearest valid key.
  void check_config_key(const std::string& key, const YAML::Mark& mark, const YAML::Node& first) const {
    Config scratch;
    for (const auto& option : option_table(scratch))
      if (option.key == key || option.key.rfind(key + ".", 0) == 0) return;
    try {
      parse({override_of(key, first)});
    } catch (const ConfigError& e) {
      throw moved_to(mark, e);
    } catch (const Error& e) {
      throw Error(cat(where(mark), ": ", e.what()));
    }
    throw Error(cat(where(mark), ": key '", key, "' is not a config key"));
  }

  void check_value(const std::string& key, const YAML::Node& value) const {
    const std::string o = override_of(key, value);
    FT_REQUIRE(o.find_first_of("\t\n") == std::string::npos, where(value.Mark()), ": key '", key,
               "': a sweep value must fit on one line without tabs");
    try {
      parse({o});
    } catch (const ConfigError& e) {
      throw moved_to(value.Mark(), e);
    } catch (const Error& e) {
      throw Error(cat(where(value.Mark()), ": ", e.what()));
    }
  }

  static std::string override_of(const std::string& key, const YAML::Node& value) {
    YAML::Emitter out;
    out << YAML::Flow << value;
    return cat(key, "=", out.c_str());
  }

  // parse_config places an error in an override at "--set key=value", or, inside a section-valued override,
  // at a position in the override's own text; the sweep places it at the value in its file instead.
  ConfigError moved_to(const YAML::Mark& mark, const ConfigError& e) const {
    ConfigPlace place = e.place();
    place.file = origin_;
    place.line = mark.line + 1;
    place.column = mark.column + 1;
    return ConfigError(place, e.message());
  }

  static std::string safe_name(const std::string& text) {
    std::string out;
    for (char c : text)
      out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-' ? c : '_';
    return out;
  }

  // Short key names in point names (batch_size, not data.batch_size) unless two varied keys share one.
  std::map<std::string, std::string> short_names() const {
    std::map<std::string, int> count;
    std::vector<std::string> varied;
    for (const auto& axis : axes_)
      if (axis.size() > 1 && axis.labels.empty())
        for (const auto& key : axis.keys) varied.push_back(key);
    auto tail = [](const std::string& key) { return key.substr(key.rfind('.') + 1); };
    for (const auto& key : varied) ++count[tail(key)];
    std::map<std::string, std::string> names;
    for (const auto& key : varied) names[key] = count[tail(key)] > 1 ? key : tail(key);
    return names;
  }

  void expand(Sweep& sweep) const {
    std::size_t total = 1;
    for (const auto& axis : axes_) total *= axis.size();
    const int width = std::max<int>(3, static_cast<int>(std::to_string(total - 1).size()));
    const auto names = short_names();
    std::vector<std::size_t> at(axes_.size(), 0);
    for (std::size_t index = 0; index < total; ++index) {
      SweepPoint point;
      point.index = index;
      if (ranks_set_ > 0) point.ranks = ranks_set_;
      std::string number = std::to_string(index);
      point.name = "p" + std::string(static_cast<std::size_t>(width) - number.size(), '0') + number;
      for (std::size_t a = 0; a < axes_.size(); ++a) {
        const Axis& axis = axes_[a];
        const std::size_t i = at[a];
        if (axis.size() > 1 && !axis.labels.empty()) point.name += "-" + axis.labels[i];
        for (std::size_t k = 0; k < axis.keys.size(); ++k) {
          const YAML::Node& value = axis.columns[k][i];
          if (axis.keys[k] == kRanks)
            point.ranks = value.as<int>();
          else
            point.overrides.push_back(override_of(axis.keys[k], value));
          if (axis.size() > 1 && axis.labels.empty()) {
            const std::string shown = value.IsScalar() ? safe_name(value.Scalar()) : cat("v", i);
            point.name += "-" + (axis.keys[k] == kRanks ? std::string(kRanks) : names.at(axis.keys[k])) + "=" + shown;
          }
        }
      }
      point.overrides = with_sets(point.overrides);
      try {
        parse_config(yaml_, origin_, point.overrides, LoadOptions{true});
      } catch (const Error& e) {
        std::string joined;
        for (const auto& o : point.overrides) joined += (joined.empty() ? "" : " ") + o;
        throw Error(cat(origin_, ": sweep point ", point.name, " (", joined, "): ", e.what()));
      }
      sweep.points.push_back(std::move(point));
      for (std::size_t a = axes_.size(); a-- > 0;) {
        if (++at[a] < axes_[a].size()) break;
        at[a] = 0;
      }
    }
  }

  // The file's text with the lines of its block-style sweep: section cut out, so comments survive;
  // a flow-style or unusual layout falls back to re-emitting the YAML without the sweep key.
  std::string without_sweep_block(const YAML::Node& doc) const {
    int start = -1, column = -1, end = -1;
    for (const auto& kv : doc)
      if (kv.first.Scalar() == "sweep") start = kv.first.Mark().line, column = kv.first.Mark().column;
    bool cuttable = column == 0;
    for (const auto& kv : doc) {
      const int line = kv.first.Mark().line;
      if (kv.first.Scalar() == "sweep") continue;
      if (line == start) cuttable = false;
      if (line > start && (end < 0 || line < end)) end = line;
    }
    std::string cut;
    if (cuttable) {
      std::istringstream in(yaml_);
      int n = 0;
      for (std::string line; std::getline(in, line); ++n)
        if (n < start || (end >= 0 && n >= end)) cut += line + "\n";
    }
    const std::string expected = dump_config(parse({}));
    if (cuttable && loads_as(cut, expected)) return cut;
    YAML::Node copy = YAML::Clone(doc);
    copy.remove("sweep");
    YAML::Emitter out;
    out << copy;
    const std::string emitted = std::string(out.c_str()) + "\n";
    FT_CHECK(loads_as(emitted, expected), origin_, ": the config without its sweep block does not load the same");
    return emitted;
  }

  bool loads_as(const std::string& text, const std::string& expected_dump) const {
    try {
      return dump_config(parse_config(text, origin_, sets_)) == expected_dump;
    } catch (const Error&) {
      return false;
    }
  }

  const std::string& yaml_;
  const std::string& origin_;
  std::vector<Axis> axes_;
  std::set<std::string> seen_;
  std::vector<std::string> sets_;  // --set overrides of every point, in order
  int ranks_set_ = 0;              // --set ranks=N, when given (0: the sweep's own ranks)
  std::string ranks_set_text_;
};

}  // namespace

int Sweep::max_ranks() const {
  int most = 1;
  for (const auto& p : points) most = std::max(most, p.ranks);
  return most;
}

Sweep parse_sweep(const std::string& yaml, const std::string& origin, const std::vector<std::string>& sets) {
  return SweepReader(yaml, origin, sets).read();
}

Sweep load_sweep(const std::string& path, const std::vector<std::string>& sets) {
  return parse_sweep(read_text_file(path, "sweep file"), path, sets);
}

}  // namespace ft
