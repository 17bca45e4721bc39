// `fusetrain plan`: the predicted step time, exposed communication, images/s and scaling efficiency of a run on
// N nodes x G ranks for each all-reduce, from a profile of this machine (or a results file) and a link file;
// `fusetrain plan profile` makes the profile. A table on the terminal, the same as JSON with --json.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/error_text.h"
#include "app/plan_profile.h"
#include "comm/bucket_plan.h"
#include "config/loader.h"
#include "io/atomic_file.h"
#include "plan/plan_files.h"
#include "plan/plan_table.h"
#include "results/results_file.h"
#include "runtime/error.h"
#include "shard/shard_reader.h"

namespace po = boost::program_options;

namespace ft {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, separator);)
    if (!item.empty()) items.push_back(item);
  return items;
}

int whole(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  FT_REQUIRE(end != text.c_str() && *end == '\0' && value >= 1 && value <= 1 << 20, option, ": '", text,
             "' is not a whole number of at least 1");
  return static_cast<int>(value);
}

// --topology 2x4,8x4 and the cross product of --nodes and --per-node.
std::vector<Topology> topologies(const po::variables_map& vm) {
  std::vector<Topology> out;
  if (vm.count("topology"))
    for (const auto& item : split(vm["topology"].as<std::string>(), ',')) {
      const auto x = item.find('x');
      FT_REQUIRE(x != std::string::npos, "--topology: '", item, "' is not NODESxRANKS_PER_NODE (e.g. 4x8)");
      out.push_back({whole(item.substr(0, x), "--topology"), whole(item.substr(x + 1), "--topology")});
    }
  if (!vm["nodes"].defaulted() || !vm["per-node"].defaulted() || out.empty())
    for (const auto& n : split(vm["nodes"].as<std::string>(), ','))
      for (const auto& g : split(vm["per-node"].as<std::string>(), ','))
        out.push_back({whole(n, "--nodes"), whole(g, "--per-node")});
  return out;
}

// The results file's run as a profile of one rank on a device of its own: each phase the slowest rank's per
// optimizer step; the buckets the engine plans for its model (from its data's image shape), ready evenly through
// backward.
StepProfile results_profile(const std::string& path, const po::variables_map& vm) {
  const RunRecord run = read_results(path);
  FT_REQUIRE(run.segments.size() == 1, path, ": a resumed run's phase times cover its last segment only; give a run ",
             "that was not resumed, or a profile (--profile)");
  FT_REQUIRE(run.summary.optimizer_steps > 0 && !run.ranks.empty(), path, ": the run took no optimizer step");
  StepProfile p;
  p.model = run.model;
  p.device = run.ranks.front().device;
  p.source = cat("results file ", path);
  p.batch = run.segments.front().per_rank_batch * run.segments.front().accumulation;
  p.steps = static_cast<int>(run.summary.optimizer_steps);
  p.ranks = 1;  // each rank's compute as on a device of its own
  double* phases[] = {&p.data_s, &p.forward_s, &p.backward_s, nullptr, &p.optimizer_s};
  for (const auto& r : run.ranks)
    for (std::size_t k = 0; k < 5; ++k)
      if (phases[k]) *phases[k] = std::max(*phases[k], r.phase_s[k] / static_cast<double>(p.steps));
  const Config config = parse_config(run.config_yaml, path);
  InputShape shape = parse_image_shape(vm["image"].as<std::string>());
  if (vm["image"].defaulted()) {
    const ShardMeta meta = ShardReader(config.data.path, "train").meta();
    shape = {meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  }
  std::vector<TensorSpec> specs;
  for (const auto& item : make_network(config.model, shape)->named_parameters())
    if (item.value().requires_grad()) specs.push_back({item.key(), DType::kFloat32, item.value().sizes().vec()});
  const auto mib = [](double m) { return static_cast<std::size_t>(m * 1024 * 1024); };
  const auto plan = plan_buckets(specs, mib(run.summary.first_bucket_mib), mib(run.summary.bucket_mib),
                                 mib(run.summary.last_bucket_mib));
  for (std::size_t b = 0; b < plan.size(); ++b) {
    ProfileBucket bucket{plan[b].numel, p.backward_s * double(b + 1) / double(plan.size()), {}};
    for (const std::size_t t : plan[b].tensors) bucket.shapes.push_back(specs[t].shape);
    p.buckets.push_back(bucket);
  }
  return p;
}

// The link file's model, each level checked to be swept beside compute (`beside`) or on an idle machine.
LinkModel read_link_swept(const std::string& path, bool beside) {
  const LinkFile link = read_link(path);
  for (const auto& r : link.levels)
    FT_REQUIRE((r.beside_compute > 0) == beside, path, " level ", r.level, ": swept ",
               beside ? "on an idle machine, not beside compute (sweep it with --beside-compute 1 for "
                        "--link-beside-compute)"
                      : "beside compute (--beside-compute): give it as --link-beside-compute, and the idle sweep as "
                        "--link");
  return link.model;
}

PlanInputs plan_inputs(const po::variables_map& vm) {
  PlanInputs in;
  FT_REQUIRE(vm.count("link") || vm.count("inter") || vm.count("intra"), "give the network: a link file (--link, from "
             "`bench allreduce --sweep --fit`) or a data sheet's rate and latency (--inter, --intra)");
  if (vm.count("link")) in.link = read_link_swept(vm["link"].as<std::string>(), false);
  if (vm.count("inter")) in.link.inter = parse_link_level(vm["inter"].as<std::string>(), "--inter");
  if (vm.count("intra")) in.link.intra = parse_link_level(vm["intra"].as<std::string>(), "--intra");
  in.one_machine = vm.count("one-machine") > 0;
  if (vm.count("link-beside-compute")) {
    FT_REQUIRE(in.one_machine, "--link-beside-compute is the pace of all-reduces on cores the ranks fill: it needs "
               "--one-machine");
    in.beside_compute = read_link_swept(vm["link-beside-compute"].as<std::string>(), true);
  }
  in.compute_scale = vm["compute-scale"].as<double>();
  if (vm.count("results")) in.profiles.push_back(results_profile(vm["results"].as<std::string>(), vm));
  if (vm.count("profile"))
    for (const auto& path : vm["profile"].as<std::vector<std::string>>()) {
      StepProfile p = read_profile(path);
      for (const auto& q : in.profiles)
        FT_REQUIRE(q.ranks != p.ranks, path, " and ", q.source, " were both measured with ", p.ranks,
                   " rank(s) at once: give one profile per count");
      in.profiles.push_back(std::move(p));
    }
  FT_REQUIRE(!in.profiles.empty(), "give a profile (--profile, from `fusetrain plan profile`) or a results file (--results)");
  return in;
}

po::options_description plan_options() {
  po::options_description options(
      "fusetrain plan: predicted step time and scaling on N nodes x G ranks\n\n"
      "usage: fusetrain plan --profile PROFILE.json --link LINK.json [--nodes 1,2,4 --per-node 8] [--json OUT.json]\n"
      "       [mpirun -np P] fusetrain plan profile --model resnet18 --batch 32 --out PROFILE.json\n\noptions");
  options.add_options()
      ("profile", po::value<std::vector<std::string>>()->composing(),
       "a profile of `fusetrain plan profile` (repeatable: one per count of ranks computing at once)")
      ("results", po::value<std::string>(), "a results file whose phase times give the compute (instead of a profile)")
      ("link", po::value<std::string>(), "the link file of `bench allreduce --sweep --fit`")
      ("inter", po::value<std::string>(), "the link between nodes as GBIT:US (rate in Gbit/s, latency in us), "
                                          "instead of or over the link file's")
      ("intra", po::value<std::string>(), "the link inside a node as GBIT:US")
      ("compute-scale", po::value<double>()->default_value(1.0),
       "the target device's compute time over the profiled one's (0.25: four times as fast)")
      ("topology", po::value<std::string>(), "NODESxRANKS_PER_NODE list, e.g. 2x8,16x8")
      ("nodes", po::value<std::string>()->default_value("1,2,4,8,16,32,64,128"), "node counts")
      ("per-node", po::value<std::string>()->default_value("1"), "ranks per node (each crossed with --nodes)")
      ("allreduce", po::value<std::string>()->default_value("flat,flat+bf16,flat+powersgd:4"),
       "all-reduces: flat | hierarchical, each optionally +fp16, +bf16 or +powersgd:R")
      ("one-machine", "every rank of a topology computes on this machine (namespace nodes): use the profile "
                      "measured with that many ranks at once")
      ("link-beside-compute", po::value<std::string>(),
       "--one-machine: the link file of a sweep with --beside-compute: each all-reduce at that pace while backward "
       "runs")
      ("image", po::value<std::string>()->default_value("3x32x32"),
       "--results: CxHxW of the images (default: from the run's data)")
      ("json", po::value<std::string>(), "write the predictions as JSON (tools/report/plan_plot.py plots them)")
      ("csv", "print CSV instead of a markdown table")
      ("help,h", "show this help");
  return options;
}

}  // namespace

int plan_command(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "profile") return plan_profile(argc - 1, argv + 1);
  const po::options_description options = plan_options();
  po::variables_map vm;
  if (!parse_command_line(options, argc, argv, vm, "fusetrain plan")) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  try {
    const PlanInputs in = plan_inputs(vm);
    std::vector<PlanRow> rows;
    const auto variants = split(vm["allreduce"].as<std::string>(), ',');
    FT_REQUIRE(!variants.empty(), "--allreduce names no all-reduce");
    for (const Topology& t : topologies(vm))
      for (const auto& v : variants) rows.push_back(predict(in, t, parse_variant(v)));
    std::fputs(plan_table(rows, vm.count("csv") > 0).c_str(), stdout);
    if (vm.count("json")) {
      write_file_atomically(vm["json"].as<std::string>(), plan_json(in, rows));
      std::printf("predictions: %s\n", vm["json"].as<std::string>().c_str());
    }
  } catch (const std::exception& e) {
    return report_error("fusetrain plan", e);
  }
  return 0;
}

}  // namespace ft
