// The batch-size study: training throughput, peak memory and GPU utilisation against the batch size,
// doubling until the device runs out of memory (or a ceiling), and the largest batch that fits.
#pragma once

namespace ft {
int bench_batch_size(int argc, char** argv);
}
