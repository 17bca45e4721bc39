// What the benchmark subcommands share: the options every one takes (--model, --device, --warmup,
// --help), their parsing, and a Config built from them for rank placement and model construction.
#pragma once

#include <ATen/Device.h>
#include <boost/program_options.hpp>

#include <functional>
#include <string>

#include "config/schema.h"

namespace ft {

// Options titled `title` holding --model (default `model`), --device and --warmup (default `warmup`);
// the caller adds its own, and bench_parse appends --help.
boost::program_options::options_description bench_options(const std::string& title, const std::string& model,
                                                          int warmup);

// Parses argv; returns -1 to go on, or the exit status: 2 after a usage error, 0 after printing --help.
int bench_parse(boost::program_options::options_description options, int argc, char** argv,
                boost::program_options::variables_map& vm, const char* command);

// A default Config with model.name and train.device taken from the options.
Config bench_config(const boost::program_options::variables_map& vm);

// --backend as the benchmark will run it: "auto" (the default) is nccl where the ranks compute on CUDA
// devices and mpi elsewhere; an explicit backend the device cannot use (nccl on the CPU) is refused as
// training refuses it, naming the option.
BackendName bench_backend(const boost::program_options::variables_map& vm, const Config& config);
// The --backend option with its "auto" default.
std::string bench_backend_help();

// Median milliseconds of `body` over `iterations` runs after `warmup`, synchronising `device` around each.
double median_ms(int warmup, int iterations, const at::Device& device, const std::function<void()>& body);

}  // namespace ft
