// `fusetrain plan profile`: a short profiled run on this machine's device, the input of `fusetrain plan`: the
// compute phases of a step and the time each fusion bucket's gradients are complete during backward.
#pragma once

namespace ft {
int plan_profile(int argc, char** argv);
}
