// JSON of the planning files through nlohmann::json; every read names the file and the key at fault.
#include "plan/plan_files.h"

#include <nlohmann/json.hpp>

#include "io/paths.h"
#include "io/text_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

using Json = nlohmann::ordered_json;
constexpr int kPlanFormatVersion = 1;

// The key's value as a number, an integer or text; `where` names the file (and the object inside it).
double json_number(const Json& j, const char* key, const std::string& where) {
  FT_REQUIRE(j.is_object() && j.contains(key) && j[key].is_number(), where, ": '", key, "' is missing or not a number");
  return j[key].get<double>();
}
std::int64_t json_integer(const Json& j, const char* key, const std::string& where) {
  FT_REQUIRE(j.is_object() && j.contains(key) && j[key].is_number_integer(), where, ": '", key,
             "' is missing or not a whole number");
  return j[key].get<std::int64_t>();
}
std::string json_text(const Json& j, const char* key, const std::string& where) {
  FT_REQUIRE(j.is_object() && j.contains(key) && j[key].is_string(), where, ": '", key, "' is missing or not text");
  return j[key].get<std::string>();
}
const Json& json_list(const Json& j, const char* key, const std::string& where) {
  FT_REQUIRE(j.is_object() && j.contains(key) && j[key].is_array(), where, ": '", key, "' is missing or not a list");
  return j[key];
}

// The parsed file, checked to be of `format` in this version.
Json parse(const std::string& path, const char* format) {
  const std::string body = read_text_file(path, cat(format, " file"));
  Json j = Json::parse(body, nullptr, false);
  FT_REQUIRE(!j.is_discarded(), path, ": not valid JSON");
  FT_REQUIRE(j.is_object() && j.value("format", "") == format, path, ": not a ", format, " file (no \"format\": \"",
             format, "\")");
  const auto version = json_integer(j, "format_version", path);
  FT_REQUIRE(version == kPlanFormatVersion, path, ": format_version ", version, " is not ", kPlanFormatVersion,
             " (written by another fusetrain version)");
  return j;
}

Json level_json(const LinkLevelRecord& r) {
  Json samples = Json::array();
  for (const auto& s : r.samples)
    samples.push_back({{"bytes", s.bytes}, {"seconds", s.seconds}, {"algorithm", s.ring ? "ring" : "doubling"},
                       {"cpu_s", s.cpu_s}});
  return {{"alpha_s", r.fit.alpha_s}, {"beta_s_per_byte", r.fit.beta_s_per_byte},
          {"small_alpha_s", r.fit.doubling_alpha_s()}, {"cpu_s_per_byte", r.fit.cpu_s_per_byte},
          {"cpu_cores", r.fit.cpu_cores}, {"gbit_s", 8e-9 / r.fit.beta_s_per_byte}, {"ranks", r.ranks},
          {"nodes", r.nodes}, {"backend", r.backend}, {"beside_compute", r.beside_compute},
          {"measured_at", r.measured_at}, {"samples", samples}};
}

LinkLevelRecord read_level(const Json& j, const std::string& name, const std::string& path) {
  const std::string where = cat(path, " level ", name);
  LinkLevelRecord r;
  r.level = name;
  r.fit = {json_number(j, "alpha_s", where), json_number(j, "beta_s_per_byte", where),
           json_number(j, "small_alpha_s", where)};
  FT_REQUIRE(r.fit.alpha_s >= 0 && r.fit.small_alpha_s >= 0 && r.fit.beta_s_per_byte > 0, where,
             ": alpha_s and small_alpha_s must be >= 0 and beta_s_per_byte > 0");
  // The machine's CPU per byte: absent from a sweep that did not count it (0, as then).
  if (j.contains("cpu_s_per_byte")) {
    r.fit.cpu_s_per_byte = json_number(j, "cpu_s_per_byte", where);
    r.fit.cpu_cores = static_cast<int>(json_integer(j, "cpu_cores", where));
    FT_REQUIRE(r.fit.cpu_s_per_byte >= 0 && r.fit.cpu_cores >= 0, where,
               ": cpu_s_per_byte and cpu_cores must be >= 0");
  }
  r.ranks = static_cast<int>(json_integer(j, "ranks", where));
  r.nodes = static_cast<int>(json_integer(j, "nodes", where));
  r.backend = json_text(j, "backend", where);
  // The busy threads per rank it was timed beside: absent from a sweep on an idle machine.
  if (j.contains("beside_compute")) r.beside_compute = static_cast<int>(json_integer(j, "beside_compute", where));
  FT_REQUIRE(r.beside_compute >= 0, where, ": beside_compute must be >= 0");
  r.measured_at = json_text(j, "measured_at", where);
  for (const auto& s : json_list(j, "samples", where)) {
    const std::string algorithm = json_text(s, "algorithm", where + " sample");
    FT_REQUIRE(algorithm == "ring" || algorithm == "doubling", where, ": a sample's algorithm is '", algorithm,
               "', neither ring nor doubling");
    r.samples.push_back({json_number(s, "bytes", where + " sample"), json_number(s, "seconds", where + " sample"),
                         algorithm == "ring", s.contains("cpu_s") ? json_number(s, "cpu_s", where + " sample") : -1});
  }
  return r;
}

}  // namespace

std::string profile_json(const StepProfile& p) {
  Json buckets = Json::array();
  for (const auto& b : p.buckets) buckets.push_back({{"elements", b.elements}, {"ready_s", b.ready_s}, {"shapes", b.shapes}});
  Json j = {{"format", "fusetrain-profile"}, {"format_version", kPlanFormatVersion}, {"model", p.model},
            {"device", p.device}, {"source", p.source}, {"batch", p.batch}, {"ranks", p.ranks}, {"steps", p.steps},
            {"element_bytes", p.element_bytes}, {"data_s", p.data_s}, {"forward_s", p.forward_s},
            {"backward_s", p.backward_s}, {"optimizer_s", p.optimizer_s}, {"buckets", buckets}};
  return j.dump(1) + "\n";
}

StepProfile read_profile(const std::string& path) {
  const Json j = parse(path, "fusetrain-profile");
  StepProfile p;
  p.model = json_text(j, "model", path);
  p.device = json_text(j, "device", path);
  p.source = json_text(j, "source", path);
  p.batch = static_cast<int>(json_integer(j, "batch", path));
  p.ranks = static_cast<int>(json_integer(j, "ranks", path));
  p.steps = static_cast<int>(json_integer(j, "steps", path));
  p.element_bytes = static_cast<int>(json_integer(j, "element_bytes", path));
  p.data_s = json_number(j, "data_s", path);
  p.forward_s = json_number(j, "forward_s", path);
  p.backward_s = json_number(j, "backward_s", path);
  p.optimizer_s = json_number(j, "optimizer_s", path);
  const Json& buckets = json_list(j, "buckets", path);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const std::string where = cat(path, " bucket ", b);
    ProfileBucket bucket{json_integer(buckets[b], "elements", where), json_number(buckets[b], "ready_s", where), {}};
    for (const auto& shape : json_list(buckets[b], "shapes", where)) {
      FT_REQUIRE(shape.is_array(), where, ": a shape is not a list of whole numbers");
      std::vector<std::int64_t> dims;
      for (const auto& d : shape) {
        FT_REQUIRE(d.is_number_integer() && d.get<std::int64_t>() > 0, where, ": a shape holds ", d.dump(),
                   ", not a positive whole number");
        dims.push_back(d.get<std::int64_t>());
      }
      bucket.shapes.push_back(dims);
    }
    p.buckets.push_back(bucket);
  }
  check_profile(p, path);
  return p;
}

std::string link_json(const LinkFile& link) {
  Json levels = Json::object();
  for (const auto& r : link.levels) levels[r.level] = level_json(r);
  Json j = {{"format", "fusetrain-link"}, {"format_version", kPlanFormatVersion},
            {"ring_min_bytes", link.model.ring_min_bytes}, {"levels", levels}};
  return j.dump(1) + "\n";
}

LinkFile read_link(const std::string& path) {
  const Json j = parse(path, "fusetrain-link");
  LinkFile link;
  link.model.ring_min_bytes = json_number(j, "ring_min_bytes", path);
  FT_REQUIRE(j.contains("levels") && j["levels"].is_object(), path, ": 'levels' is missing or not an object");
  for (const auto& [name, value] : j["levels"].items()) {
    FT_REQUIRE(name == "intra" || name == "inter", path, ": level '", name, "' is neither intra nor inter");
    link.levels.push_back(read_level(value, name, path));
    (name == "intra" ? link.model.intra : link.model.inter) = link.levels.back().fit;
  }
  FT_REQUIRE(!link.levels.empty(), path, ": no level measured (intra or inter)");
  return link;
}

LinkFile merge_link_level(const std::string& path, const LinkLevelRecord& record, double ring_min_bytes) {
  LinkFile link;
  if (paths::exists(path)) link = read_link(path);
  std::vector<LinkLevelRecord> kept;
  for (auto& r : link.levels)
    if (r.level != record.level) kept.push_back(r);
  kept.push_back(record);
  link.levels = kept;
  link.model.ring_min_bytes = ring_min_bytes;
  (record.level == "intra" ? link.model.intra : link.model.inter) = record.fit;
  return link;
}

std::string plan_json(const PlanInputs& inputs, const std::vector<PlanRow>& rows) {
  Json profiles = Json::array();
  for (const auto& p : inputs.profiles)
    profiles.push_back({{"model", p.model}, {"device", p.device}, {"source", p.source}, {"batch", p.batch},
                        {"ranks", p.ranks}, {"compute_s", p.compute_s()}, {"buckets", p.buckets.size()}});
  const auto level = [](const LinkLevel& l) {
    return l.known() ? Json{{"alpha_s", l.alpha_s}, {"small_alpha_s", l.doubling_alpha_s()},
                            {"beta_s_per_byte", l.beta_s_per_byte}, {"cpu_s_per_byte", l.cpu_s_per_byte},
                            {"cpu_cores", l.cpu_cores}}
                     : Json();
  };
  Json out = Json::array();
  for (const auto& r : rows)
    out.push_back({{"nodes", r.topology.nodes}, {"ranks_per_node", r.topology.per_node},
                   {"devices", r.topology.ranks()}, {"allreduce", r.variant.name()}, {"profile_ranks", r.profile_ranks},
                   {"step_s", r.step_s}, {"compute_s", r.compute_s}, {"allreduce_s", r.comm_s},
                   {"exposed_s", r.exposed_s}, {"comm_cpu_s", r.comm_cpu_s}, {"images_per_s", r.images_per_s},
                   {"efficiency", r.efficiency}});
  Json j = {{"format", "fusetrain-plan"}, {"format_version", kPlanFormatVersion}, {"profiles", profiles},
            {"link", {{"intra", level(inputs.link.intra)}, {"inter", level(inputs.link.inter)},
                      {"ring_min_bytes", inputs.link.ring_min_bytes}}},
            {"one_machine", inputs.one_machine},
            {"link_beside_compute", {{"intra", level(inputs.beside_compute.intra)},
                                     {"inter", level(inputs.beside_compute.inter)}}},
            {"rows", out}};
  return j.dump(1) + "\n";
}

}  // namespace ft
