// Results file writer and reader over the io/h5 layer. Tables are stored column-wise (one dataset per
// column) so that h5py, h5dump and pandas read them without custom types.
#include "results/results_file.h"

#include "io/atomic_file.h"
#include "io/h5.h"

namespace ft {
namespace {

const char* const kPhaseNames[kRankPhases] = {"data_s", "forward_s", "backward_s", "comm_wait_s",
                                              "optimizer_s", "eval_s"};

template <typename T, typename Field>
std::vector<T> column(const std::vector<EpochRecord>& rows, Field field) {
  std::vector<T> out;
  for (const auto& r : rows) out.push_back(static_cast<T>(r.*field));
  return out;
}

void write_column(hid_t group, const std::string& name, const std::vector<double>& values) {
  h5::write(group, name, values.data(), {values.size()});
}

}  // namespace

void write_results(const std::string& path, const RunRecord& r) {
  // Built in memory and written with checked system calls: a full disk is an error naming the path,
  // never a broken file (HDF5's own writer cannot report a failed flush reliably).
  std::string image;
  {
    h5::Handle file = h5::create_memory_file(path);
    h5::set_attr(file, "format", "fusetrain-results");
    h5::set_attr(file, "format_version", kResultsFormatVersion);
    h5::set_attr(file, "name", r.name);
    h5::set_attr(file, "model", r.model);
    h5::set_attr(file, "dataset", r.dataset);
    h5::set_attr(file, "precision", r.precision);
    h5::set_attr(file, "batch_size", static_cast<std::int64_t>(r.batch_size));
    h5::write_strings(file, "config", {r.config_yaml});

    h5::Handle prov = h5::create_group(file, "provenance");
    const auto& p = r.provenance;
    h5::set_attr(prov, "program_version", p.program_version);
    h5::set_attr(prov, "git_commit", p.git_commit);
    h5::set_attr(prov, "torch_version", p.torch_version);
    h5::set_attr(prov, "cuda_version", p.cuda_version);
    h5::set_attr(prov, "mpi_version", p.mpi_version);
    h5::set_attr(prov, "command_line", p.command_line);
    h5::set_attr(prov, "started_at", p.started_at);
    h5::set_attr(prov, "backend", p.backend);
    h5::set_attr(prov, "world_size", static_cast<std::int64_t>(p.world_size));
    h5::set_attr(prov, "node_count", static_cast<std::int64_t>(p.node_count));

    h5::Handle epochs = h5::create_group(file, "epochs");
    const auto& e = r.epochs;
    std::vector<std::int32_t> numbers;
    std::vector<std::int32_t> evaluated;
    for (const auto& row : e) numbers.push_back(row.epoch), evaluated.push_back(row.evaluated ? 1 : 0);
    h5::write(epochs, "epoch", numbers.data(), {numbers.size()});
    h5::write(epochs, "evaluated", evaluated.data(), {evaluated.size()});
    write_column(epochs, "train_loss", column<double>(e, &EpochRecord::train_loss));
    write_column(epochs, "train_acc", column<double>(e, &EpochRecord::train_acc));
    write_column(epochs, "test_loss", column<double>(e, &EpochRecord::test_loss));
    write_column(epochs, "test_acc", column<double>(e, &EpochRecord::test_acc));
    write_column(epochs, "lr", column<double>(e, &EpochRecord::lr));
    write_column(epochs, "epoch_time_s", column<double>(e, &EpochRecord::epoch_time_s));
    write_column(epochs, "images_per_s", column<double>(e, &EpochRecord::images_per_s));

    h5::Handle ranks = h5::create_group(file, "ranks");
    std::vector<std::string> hosts, devices;
    std::vector<std::int64_t> memory, images, bytes;
    std::vector<std::int32_t> local_ranks;
    std::vector<double> allreduce_s;
    for (const auto& rank : r.ranks) {
      hosts.push_back(rank.hostname);
      devices.push_back(rank.device);
      local_ranks.push_back(rank.local_rank);
      memory.push_back(rank.peak_memory_bytes);
      images.push_back(rank.train_images);
      bytes.push_back(rank.allreduce_bytes);
      allreduce_s.push_back(rank.allreduce_s);
    }
    h5::write_strings(ranks, "hostname", hosts);
    h5::write_strings(ranks, "device", devices);
    h5::write(ranks, "local_rank", local_ranks.data(), {local_ranks.size()});
    h5::write(ranks, "peak_memory_bytes", memory.data(), {memory.size()});
    h5::write(ranks, "train_images", images.data(), {images.size()});
    h5::write(ranks, "allreduce_bytes", bytes.data(), {bytes.size()});
    write_column(ranks, "allreduce_s", allreduce_s);
    for (std::size_t k = 0; k < kRankPhases; ++k) {
      std::vector<double> values;
      for (const auto& rank : r.ranks) values.push_back(rank.phase_s[k]);
      write_column(ranks, kPhaseNames[k], values);
    }

    h5::Handle util = h5::create_group(file, "utilization");
    std::vector<double> t, gpu, mem;
    std::vector<std::int32_t> util_rank;
    for (const auto& s : r.utilization)
      t.push_back(s.time_s), gpu.push_back(s.gpu_percent), mem.push_back(s.memory_percent),
          util_rank.push_back(s.rank);
    write_column(util, "time_s", t);
    write_column(util, "gpu_percent", gpu);
    write_column(util, "memory_percent", mem);
    h5::write(util, "rank", util_rank.data(), {util_rank.size()});

    h5::Handle summary = h5::create_group(file, "summary");
    const auto& s = r.summary;
    h5::set_attr(summary, "wall_time_s", s.wall_time_s);
    h5::set_attr(summary, "train_time_s", s.train_time_s);
    h5::set_attr(summary, "best_test_acc", s.best_test_acc);
    h5::set_attr(summary, "best_epoch", static_cast<std::int64_t>(s.best_epoch));
    h5::set_attr(summary, "final_test_acc", s.final_test_acc);
    h5::set_attr(summary, "final_test_loss", s.final_test_loss);
    h5::set_attr(summary, "epochs_run", static_cast<std::int64_t>(s.epochs_run));
    h5::set_attr(summary, "images_per_s", s.images_per_s);
    h5::set_attr(summary, "peak_memory_bytes", s.peak_memory_bytes);
    h5::set_attr(summary, "overfit", static_cast<std::int64_t>(s.overfit));
    h5::set_attr(summary, "overfit_epoch", static_cast<std::int64_t>(s.overfit_epoch));
    h5::set_attr(summary, "stopped_early", static_cast<std::int64_t>(s.stopped_early));
    h5::set_attr(summary, "optimizer_steps", s.optimizer_steps);
    h5::set_attr(summary, "skipped_steps", s.skipped_steps);
    summary.close();
    util.close();
    ranks.close();
    epochs.close();
    prov.close();
    image = h5::file_image(file);
    file.close();
  }
  write_file_atomically(path, image);
}

RunRecord read_results(const std::string& path) {
  RunRecord r;
  try {
    h5::Handle file = h5::open_file(path);
    FT_REQUIRE(h5::has_attr(file, "format") && h5::attr_string(file, "format") == "fusetrain-results",
               "not a fusetrain results file");
    const auto version = h5::attr_int(file, "format_version");
    FT_REQUIRE(version == kResultsFormatVersion, "results format_version ", version, " is not ",
               kResultsFormatVersion);
    r.name = h5::attr_string(file, "name");
    r.model = h5::attr_string(file, "model");
    r.dataset = h5::attr_string(file, "dataset");
    r.precision = h5::attr_string(file, "precision");
    r.batch_size = static_cast<int>(h5::attr_int(file, "batch_size"));
    r.config_yaml = h5::read_strings(file, "config").at(0);

    h5::Handle prov = h5::open_group(file, "provenance");
    auto& p = r.provenance;
    p.program_version = h5::attr_string(prov, "program_version");
    p.git_commit = h5::attr_string(prov, "git_commit");
    p.torch_version = h5::attr_string(prov, "torch_version");
    p.cuda_version = h5::attr_string(prov, "cuda_version");
    p.mpi_version = h5::attr_string(prov, "mpi_version");
    p.command_line = h5::attr_string(prov, "command_line");
    p.started_at = h5::attr_string(prov, "started_at");
    p.backend = h5::attr_string(prov, "backend");
    p.world_size = static_cast<int>(h5::attr_int(prov, "world_size"));
    p.node_count = static_cast<int>(h5::attr_int(prov, "node_count"));

    h5::Handle epochs = h5::open_group(file, "epochs");
    const auto numbers = h5::read_all<std::int32_t>(epochs, "epoch");
    const auto evaluated = h5::read_all<std::int32_t>(epochs, "evaluated");
    const auto train_loss = h5::read_all<double>(epochs, "train_loss");
    const auto train_acc = h5::read_all<double>(epochs, "train_acc");
    const auto test_loss = h5::read_all<double>(epochs, "test_loss");
    const auto test_acc = h5::read_all<double>(epochs, "test_acc");
    const auto lr = h5::read_all<double>(epochs, "lr");
    const auto time = h5::read_all<double>(epochs, "epoch_time_s");
    const auto ips = h5::read_all<double>(epochs, "images_per_s");
    for (std::size_t i = 0; i < numbers.size(); ++i)
      r.epochs.push_back({numbers[i], train_loss[i], train_acc[i], test_loss[i], test_acc[i], lr[i], time[i],
                          ips[i], evaluated[i] != 0});

    h5::Handle ranks = h5::open_group(file, "ranks");
    const auto hosts = h5::read_strings(ranks, "hostname");
    const auto devices = h5::read_strings(ranks, "device");
    // Files written before local ranks were recorded lack the column: every rank reads as 0.
    const auto local_ranks = h5::exists(ranks, "local_rank") ? h5::read_all<std::int32_t>(ranks, "local_rank")
                                                             : std::vector<std::int32_t>(hosts.size(), 0);
    const auto memory = h5::read_all<std::int64_t>(ranks, "peak_memory_bytes");
    const auto images = h5::read_all<std::int64_t>(ranks, "train_images");
    const auto bytes = h5::read_all<std::int64_t>(ranks, "allreduce_bytes");
    const auto allreduce_s = h5::read_all<double>(ranks, "allreduce_s");
    r.ranks.resize(hosts.size());
    for (std::size_t k = 0; k < kRankPhases; ++k) {
      const auto values = h5::read_all<double>(ranks, kPhaseNames[k]);
      for (std::size_t i = 0; i < r.ranks.size(); ++i) r.ranks[i].phase_s[k] = values.at(i);
    }
    for (std::size_t i = 0; i < r.ranks.size(); ++i) {
      r.ranks[i].hostname = hosts[i];
      r.ranks[i].device = devices.at(i);
      r.ranks[i].local_rank = local_ranks.at(i);
      r.ranks[i].peak_memory_bytes = memory.at(i);
      r.ranks[i].train_images = images.at(i);
      r.ranks[i].allreduce_bytes = bytes.at(i);
      r.ranks[i].allreduce_s = allreduce_s.at(i);
    }

    h5::Handle util = h5::open_group(file, "utilization");
    const auto t = h5::read_all<double>(util, "time_s");
    const auto gpu = h5::read_all<double>(util, "gpu_percent");
    const auto mem = h5::read_all<double>(util, "memory_percent");
    const auto util_rank = h5::read_all<std::int32_t>(util, "rank");
    for (std::size_t i = 0; i < t.size(); ++i) r.utilization.push_back({t[i], util_rank.at(i), gpu.at(i), mem.at(i)});

    h5::Handle summary = h5::open_group(file, "summary");
    auto& s = r.summary;
    s.wall_time_s = h5::attr_double(summary, "wall_time_s");
    s.train_time_s = h5::attr_double(summary, "train_time_s");
    s.best_test_acc = h5::attr_double(summary, "best_test_acc");
    s.best_epoch = static_cast<int>(h5::attr_int(summary, "best_epoch"));
    s.final_test_acc = h5::attr_double(summary, "final_test_acc");
    s.final_test_loss = h5::attr_double(summary, "final_test_loss");
    s.epochs_run = static_cast<int>(h5::attr_int(summary, "epochs_run"));
    s.images_per_s = h5::attr_double(summary, "images_per_s");
    s.peak_memory_bytes = h5::attr_int(summary, "peak_memory_bytes");
    s.overfit = h5::attr_int(summary, "overfit") != 0;
    s.overfit_epoch = static_cast<int>(h5::attr_int(summary, "overfit_epoch"));
    s.stopped_early = h5::attr_int(summary, "stopped_early") != 0;
    s.optimizer_steps = h5::attr_int(summary, "optimizer_steps");
    s.skipped_steps = h5::attr_int(summary, "skipped_steps");
  } catch (const Error& e) {
    throw Error(cat(path, ": ", e.what()));
  }
  return r;
}

}  // namespace ft
