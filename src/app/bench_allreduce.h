// The all-reduce benchmark: (a) one collective per gradient tensor, (b) the fusion engine, (c) one
// collective over a single buffer of the same bytes, for a model's real parameter list.
#pragma once

namespace ft {
int bench_allreduce(int argc, char** argv);
}
