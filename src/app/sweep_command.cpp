// `fusetrain sweep FILE`: expands a config's sweep: block into points and writes the sweep directory
// (config, manifest, points file, SLURM array script, workstation plan); --run trains the points here.
#include <boost/program_options.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/commands.h"
#include "app/error_text.h"
#include "config/sweep.h"
#include "io/atomic_file.h"
#include "io/output_claim.h"
#include "io/paths.h"
#include "io/text_file.h"
#include "results/report_table.h"
#include "results/results_file.h"
#include "runtime/error.h"
#include "runtime/signals.h"

namespace po = boost::program_options;

namespace ft {
namespace {

// Where a sweep's files live; every path is absolute so that scripts run from any directory and node.
struct Plan {
  Sweep sweep;
  std::string stem;     // the config file's stem: names the sweep
  std::string dir, config, results, logs;
  std::string binary;      // this fusetrain, which the scripts run
  std::string workdir;     // where the plan was made: relative paths in the config (data.path) resolve here
  std::string mpirun;   // launcher for the workstation plan, split at spaces
  std::string result_of(const SweepPoint& p) const { return paths::join(results, p.name + ".h5"); }
};

std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%-") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

void write_text(const std::string& path, const std::string& text, bool executable = false) {
  AtomicFile out(path);
  {
    std::ofstream file(out.temp_path());
    file << text;
    FT_REQUIRE(file.flush(), "cannot write ", path);
  }
  if (executable) paths::add_execute_permission(out.temp_path());
  out.commit();
}

// The arguments after `fusetrain` that train one point.
std::vector<std::string> train_args(const Plan& plan, const SweepPoint& p) {
  std::vector<std::string> args = {"train", "--config", plan.config};
  for (const auto& o : p.overrides) args.insert(args.end(), {"--set", o});
  args.insert(args.end(), {"--set", "output.dir=" + plan.results, "--set", "output.name=" + p.name});
  return args;
}

std::vector<std::string> launch_args(const Plan& plan, const SweepPoint& p) {
  std::vector<std::string> argv = split(plan.mpirun);
  argv.insert(argv.end(), {"-np", std::to_string(p.ranks), plan.binary});
  const auto train = train_args(plan, p);
  argv.insert(argv.end(), train.begin(), train.end());
  return argv;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + quote(w);
  return out;
}

std::string manifest(const Plan& plan) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "sweep" << YAML::Value << plan.stem;
  out << YAML::Key << "source" << YAML::Value << paths::absolute(plan.sweep.origin);
  out << YAML::Key << "config" << YAML::Value << plan.config;
  out << YAML::Key << "fusetrain" << YAML::Value << plan.binary;
  out << YAML::Key << "workdir" << YAML::Value << plan.workdir;
  out << YAML::Key << "keys" << YAML::Value << YAML::Flow << plan.sweep.keys;
  out << YAML::Key << "max_ranks" << YAML::Value << plan.sweep.max_ranks();
  out << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : plan.sweep.points) {
    out << YAML::BeginMap;
    out << YAML::Key << "index" << YAML::Value << p.index;
    out << YAML::Key << "name" << YAML::Value << p.name;
    out << YAML::Key << "ranks" << YAML::Value << p.ranks;
    out << YAML::Key << "overrides" << YAML::Value << YAML::Flow << p.overrides;
    out << YAML::Key << "results" << YAML::Value << plan.result_of(p);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return cat("# Sweep ", plan.stem, " written by `fusetrain sweep`: its points, their --set overrides on top of\n"
             "# config, their MPI ranks and results files. points.tsv holds the same for the job scripts.\n",
             out.c_str(), "\n");
}

// One line per point, tab-separated: index, name, ranks, config, output dir, overrides... (read by
// jobs/slurm/sweep.sbatch; values never hold tabs or newlines, sweep.cpp checks that).
std::string points_file(const Plan& plan) {
  std::string text = "# index\tname\tranks\tconfig\toutput_dir\toverrides...\n";
  for (const auto& p : plan.sweep.points) {
    text += cat(p.index, "\t", p.name, "\t", p.ranks, "\t", plan.config, "\t", plan.results);
    for (const auto& o : p.overrides) text += "\t" + o;
    text += "\n";
  }
  return text;
}

std::string workstation_plan(const Plan& plan) {
  std::string text = cat(
      "#!/usr/bin/env bash\n"
      "# Workstation plan of sweep ", plan.stem, " (", plan.sweep.points.size(),
      " points), written by `fusetrain sweep`:\n"
      "# one mpirun per point, in order; a point whose results file exists is skipped, so running again resumes.\n"
      "# Environment: MPIRUN (launcher and its flags), FUSETRAIN_BIN (the fusetrain binary).\n"
      "set -euo pipefail\n"
      "cd ", quote(plan.workdir), "\n"
      "MPIRUN=${MPIRUN:-", quote(plan.mpirun), "}\n"
      "FUSETRAIN_BIN=${FUSETRAIN_BIN:-", quote(plan.binary), "}\n"
      "config=", quote(plan.config), "\n"
      "out=", quote(plan.results), "\n"
      "mkdir -p \"$out\"\n\n");
  for (const auto& p : plan.sweep.points) {
    std::string sets;
    for (const auto& o : p.overrides) sets += " --set " + quote(o);
    text += cat("[ -f \"$out/", p.name, ".h5\" ] || $MPIRUN -np ", p.ranks,
                " \"$FUSETRAIN_BIN\" train --config \"$config\"", sets, " --set \"output.dir=$out\" --set ",
                quote("output.name=" + p.name), "\n");
  }
  return text;
}

// jobs/slurm/sweep.sbatch with this sweep's #SBATCH options and defaults filled in, so the sweep
// directory carries everything a cluster needs and there is one array runner to maintain.
std::string array_script(const Plan& plan, const std::string& runner) {
  std::istringstream in(read_text_file(runner, "the SLURM array runner"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  FT_REQUIRE(!lines.empty() && lines[0].rfind("#!", 0) == 0, runner, ": expected a bash script");
  std::string text = cat(
      "#!/usr/bin/env bash\n"
      "# SLURM array job of sweep ", plan.stem, " (", plan.sweep.points.size(),
      " points), written by `fusetrain sweep`:\n"
      "# `sbatch ", paths::join(plan.dir, "sweep.sbatch"), "` runs every point; the rest is ",
      paths::filename(runner), ".\n"
      "#SBATCH --job-name=sweep-", plan.stem, "\n"
      "#SBATCH --array=0-", plan.sweep.points.size() - 1, "\n"
      "#SBATCH --ntasks=", plan.sweep.max_ranks(), "\n"
      "#SBATCH --output=", paths::join(plan.logs, "slurm-%A_%a.out"), "\n"
      "#SBATCH --chdir=", plan.workdir, "\n");
  bool inserted = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& line = lines[i];
    if (!inserted && !line.empty() && line[0] != '#') {
      text += cat("SWEEP_DIR=${SWEEP_DIR:-", quote(plan.dir), "}\n",
                  "FUSETRAIN_BIN=${FUSETRAIN_BIN:-", quote(plan.binary), "}\n");
      inserted = true;
    }
    text += line + "\n";
  }
  FT_REQUIRE(inserted, runner, ": no commands after the #SBATCH header");
  return text;
}

// The array runner ships in the source tree's jobs/slurm; a build lives in <source>/<build>/bin.
std::string find_runner(const std::string& given) {
  if (!given.empty()) return given;
  std::vector<std::string> tried;
  const std::string exe = paths::self_executable();
  for (const std::string& root : {paths::parent(paths::parent(paths::parent(exe))), paths::current_dir()}) {
    tried.push_back(paths::join(root, "jobs/slurm/sweep.sbatch"));
    if (paths::exists(tried.back())) return tried.back();
  }
  throw Error(cat("cannot find jobs/slurm/sweep.sbatch (looked at ", tried[0], " and ",
                  tried[1], "): pass --runner PATH"));
}

// A plan may be rewritten freely, but not over results or checkpoints that a different plan produced.
void check_not_stale(const Plan& plan, const std::string& points) {
  const std::string old_points = paths::join(plan.dir, "points.tsv"), old_config = paths::join(plan.dir, "config.yaml");
  if (!paths::exists(old_points)) return;
  if (read_text_file(old_points) == points && paths::exists(old_config) &&
      read_text_file(old_config) == plan.sweep.base_yaml)
    return;
  bool results = false;
  if (paths::exists(plan.results))
    for (const std::string& name : paths::list_directory(plan.results))
      results = results || ends_with(name, ".h5") || ends_with(name, ".ckpt");
  FT_REQUIRE(!results, plan.dir, " holds results or checkpoints of a different plan of this sweep (its "
             "points.tsv or config.yaml differ): pass another --out, or remove the directory to start over");
}

// The plan's folder, writable; its files are rewritten freely, but never onto the sweep file or the runner
// the plan was made from.
void claim_plan_files(const Plan& plan, const std::string& sweep_file, const std::string& runner) {
  ensure_writable_directory(plan.dir);
  const std::vector<std::pair<std::string, std::string>> inputs = {{"the sweep file", sweep_file},
                                                                   {"--runner", runner}};
  for (const std::string& name : {"config.yaml", "manifest.yaml", "points.tsv", "sweep.sbatch", "run.sh"})
    claim_output({paths::join(plan.dir, name), "--out", "--force", true, inputs});
}

volatile pid_t g_child = 0;
extern "C" void ask_child_to_stop(int) {
  if (g_child > 0) kill(g_child, SIGUSR1);
}

// Runs argv with stdout and stderr appended to `log`; returns the exit status (128 + signal if killed).
// SIGINT reaches the child from the terminal itself; SIGTERM and SIGUSR1 become SIGUSR1 for the child,
// which mpirun passes on to the ranks (SIGTERM would make mpirun abort them) so that they checkpoint.
int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  FT_REQUIRE(fd >= 0, "cannot write the log ", log, ": ", std::strerror(errno));
  const pid_t pid = fork();
  FT_REQUIRE(pid >= 0, "cannot fork to start ", argv[0]);
  if (pid == 0) {
    dup2(fd, 1), dup2(fd, 2);
    execvp(args[0], args.data());
    std::fprintf(stderr, "fusetrain sweep: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(fd);
  g_child = pid;
  auto previous_int = std::signal(SIGINT, SIG_IGN);
  auto previous_term = std::signal(SIGTERM, ask_child_to_stop);
  auto previous_usr1 = std::signal(SIGUSR1, ask_child_to_stop);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  std::signal(SIGUSR1, previous_usr1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string log_tail(const std::string& log, std::size_t count) {
  std::vector<std::string> lines;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out;
}

// Trains the points in order, skipping those with a results file; returns the exit status.
int run_points(const Plan& plan) {
  paths::create_directories(plan.logs);
  const std::size_t n = plan.sweep.points.size();
  for (const auto& p : plan.sweep.points) {
    const std::string step = cat("[", p.index + 1, "/", n, "] ", p.name);
    if (paths::exists(plan.result_of(p))) {
      std::printf("%s: done earlier (%s)\n", step.c_str(), plan.result_of(p).c_str());
      continue;
    }
    const std::string log = paths::join(plan.logs, p.name + ".log");
    const auto argv = launch_args(plan, p);
    std::printf("%s: training on %d rank(s), log %s\n", step.c_str(), p.ranks, log.c_str());
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    const int status = run_logged(argv, log);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status == kExitResumable) {
      std::printf("%s: checkpointed on a stop request after %.0f s; run the same command again to resume\n",
                  step.c_str(), seconds);
      return kExitResumable;
    }
    if (status != 0 || !paths::exists(plan.result_of(p))) {
      std::fprintf(stderr, "fusetrain sweep: point %s failed (exit status %d) after %.0f s: %s\n"
                   "  command: %s\n  last lines of %s:\n%s",
                   p.name.c_str(), status, seconds, status ? "see its log" : "no results file was written",
                   joined(argv).c_str(), log.c_str(), log_tail(log, 15).c_str());
      return status ? status : 1;
    }
    const RunRecord run = read_results(plan.result_of(p));
    std::printf("%s: done in %.0f s, final test accuracy %.2f%%\n", step.c_str(), seconds,
                100 * run.summary.final_test_acc);
    std::fflush(stdout);
  }
  return 0;
}

std::string report(const Plan& plan) {
  std::vector<RunRecord> runs;
  for (const auto& p : plan.sweep.points)
    if (paths::exists(plan.result_of(p))) runs.push_back(read_results(plan.result_of(p)));
  if (runs.empty()) return "";
  ReportOptions options;
  options.extra_keys = plan.sweep.keys;
  return "\n" + report_table(runs, options);
}

std::string default_mpirun() {
  if (const char* env = std::getenv("FUSETRAIN_MPIRUN")) return env;
  return std::string("mpirun --oversubscribe --bind-to none") + (geteuid() == 0 ? " --allow-run-as-root" : "");
}

}  // namespace

int sweep_command(int argc, char** argv) {
  po::options_description options(
      "fusetrain sweep: expand a config's sweep: block into runs\n\n"
      "usage: fusetrain sweep FILE [--set KEY=VALUE]... [--out DIR] [--run] [--mpirun CMD] [--dry-run]\n\n"
      "Writes DIR (default runs/sweeps/<FILE stem>): config.yaml, manifest.yaml, points.tsv, sweep.sbatch\n"
      "(`sbatch DIR/sweep.sbatch` runs one array task per point) and run.sh (one mpirun per point).\n\n"
      "options");
  options.add_options()
      ("set", po::value<std::vector<std::string>>()->composing(),
       "KEY=VALUE applied to every point after its own settings (repeatable; not a swept key or output.*); "
       "ranks=N runs every point on N ranks")
      ("out,o", po::value<std::string>(), "sweep directory (default runs/sweeps/<FILE stem>)")
      ("run", "train the points here, one after another (skipping finished ones), then print the report")
      ("mpirun", po::value<std::string>(),
       "launcher for run.sh and --run, split at spaces (default $FUSETRAIN_MPIRUN, else "
       "'mpirun --oversubscribe --bind-to none', plus --allow-run-as-root for root)")
      ("runner", po::value<std::string>(), "SLURM array runner to fill in (default: jobs/slurm/sweep.sbatch of the "
       "source tree this fusetrain was built in, or of the current directory)")
      ("dry-run", "print the points and their commands; write nothing")
      ("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::string>(), "config with a sweep: block");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "fusetrain sweep: %s\n\n", e.what());
    std::cerr << options;
    return 2;
  }
  if (vm.count("help")) return std::cout << options, 0;
  if (!vm.count("file")) {
    std::fprintf(stderr, "fusetrain sweep: no config file given\n\n");
    std::cerr << options;
    return 2;
  }
  if (vm.count("run") && vm.count("dry-run")) {
    std::fprintf(stderr, "fusetrain sweep: --run and --dry-run exclude each other\n");
    return 2;
  }
  const std::string file = vm["file"].as<std::string>();
  Plan plan;
  try {
    plan.sweep = load_sweep(file, vm.count("set") ? vm["set"].as<std::vector<std::string>>()
                                                  : std::vector<std::string>{});
  } catch (const Error& e) {
    return report_error("fusetrain sweep", e, 2, "config error");
  }
  try {
    plan.stem = paths::stem(file);
    const std::string out = vm.count("out") ? vm["out"].as<std::string>() : paths::join("runs/sweeps", plan.stem);
    plan.dir = paths::absolute(out);
    plan.config = paths::join(plan.dir, "config.yaml");
    plan.results = paths::join(plan.dir, "results");
    plan.logs = paths::join(plan.dir, "logs");
    plan.binary = paths::self_executable();
    plan.workdir = paths::current_dir();
    plan.mpirun = vm.count("mpirun") ? vm["mpirun"].as<std::string>() : default_mpirun();
    FT_REQUIRE(!split(plan.mpirun).empty(), "--mpirun: empty launcher command");

    if (vm.count("dry-run")) {
      std::printf("sweep %s: %zu points from %s, up to %d rank(s), into %s\n", plan.stem.c_str(),
                  plan.sweep.points.size(), file.c_str(), plan.sweep.max_ranks(), plan.dir.c_str());
      for (const auto& p : plan.sweep.points)
        std::printf("%s\n  %s\n", p.name.c_str(), joined(launch_args(plan, p)).c_str());
      return 0;
    }

    const std::string points = points_file(plan);
    const std::string runner = vm.count("runner") ? vm["runner"].as<std::string>() : "";
    const std::string sbatch = array_script(plan, find_runner(runner));
    check_not_stale(plan, points);
    claim_plan_files(plan, file, find_runner(runner));
    paths::create_directories(plan.results);
    paths::create_directories(plan.logs);
    write_text(plan.config, plan.sweep.base_yaml);
    write_text(paths::join(plan.dir, "manifest.yaml"), manifest(plan));
    write_text(paths::join(plan.dir, "points.tsv"), points);
    write_text(paths::join(plan.dir, "sweep.sbatch"), sbatch, true);
    write_text(paths::join(plan.dir, "run.sh"), workstation_plan(plan), true);
    std::printf("sweep %s: %zu points, up to %d rank(s), written to %s\n", plan.stem.c_str(), plan.sweep.points.size(),
                plan.sweep.max_ranks(), plan.dir.c_str());
    if (!vm.count("run")) {
      std::printf("  SLURM:       sbatch %s\n  workstation: bash %s   (or: fusetrain sweep %s --run)\n",
                  paths::join(plan.dir, "sweep.sbatch").c_str(), paths::join(plan.dir, "run.sh").c_str(), file.c_str());
      return 0;
    }
    std::fflush(stdout);
    const int status = run_points(plan);
    std::printf("%s", report(plan).c_str());
    return status;
  } catch (const std::exception& e) {
    return report_error("fusetrain sweep", e);
  }
}

}  // namespace ft
