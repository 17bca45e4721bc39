// The coursework's kernel comparison in one run: conv+bias+ReLU forward and backward with cuDNN,
// with cuDNN disabled, with the hand-written fused kernel, and on the CPU; RGB->gray GPU vs CPU loop.
#pragma once

namespace ft {
int bench_kernels(int argc, char** argv);
}
