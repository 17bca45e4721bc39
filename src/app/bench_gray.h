// `fusetrain bench gray`: the RGB -> gray study on real images (see bench_gray.cpp).
#pragma once

namespace ft {

int bench_gray(int argc, char** argv);

}  // namespace ft
