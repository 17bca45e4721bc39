// The per-element rules of the 2x2 max-pool: map addressing, a window's maximum, the geometry a launch gives its
// threads and the work of one (V channels of one pooled pixel), which the CPU tests run thread by thread.
#pragma once

#include <cstdint>

#include "kernels/common.h"
#include "kernels/max_pool.h"

namespace ft {

// The memory offset of element (n, c, h, w) of a [*, C, H, W] map stored NHWC (channels_last) or NCHW, in the
// index type I of the caller (the CUDA kernels index maps below 2^31 elements in 32 bits).
template <typename I>
FT_HOST_DEVICE inline I map_offset(I n, I c, I h, I w, I channels, I height, I width, bool channels_last) {
  return channels_last ? ((n * height + h) * width + w) * channels + c : ((n * channels + c) * height + h) * width + w;
}

// The maximum of a 2x2 window given in row-major order and its position 0..3: the first maximum wins and a NaN
// propagates (the last one), as ATen's max_pool2d. A: float or double (v != v is the NaN test in the type
// itself, no conversion to double on the device).
template <typename A>
FT_HOST_DEVICE inline A window_max(const A (&v)[4], std::uint8_t* index) {
  A best = v[0];
  std::uint8_t at = 0;
  for (std::uint8_t k = 1; k < 4; ++k)
    if (v[k] > best || v[k] != v[k]) best = v[k], at = k;
  *index = at;
  return best;
}

// The input rows (or columns) that pooled row (column) i writes in backward: its window's 2 and, for the last one of
// a map with an odd number (`input`), the row no window covers, so that every input element is written.
template <typename I>
FT_HOST_DEVICE inline int window_span(I i, I pooled, I input) {
  return i + 1 == pooled && input % 2 ? 3 : 2;
}

// A map [batch, channels, height, width] and its 2x2-pooled map [.., out_h, out_w] (floor), in index type I.
template <typename I>
struct PoolGeometry {
  I batch, channels, height, width, out_h, out_w;
  bool channels_last;
};

// The geometry of shape s in index type I, as the launchers pass it to every thread.
template <typename I>
PoolGeometry<I> pool_geometry(const MaxPoolShape& s) {
  return {static_cast<I>(s.batch),      static_cast<I>(s.channels),  static_cast<I>(s.height),
          static_cast<I>(s.width),      static_cast<I>(s.height / 2), static_cast<I>(s.width / 2), s.channels_last};
}

// V consecutive elements, aligned to their size: one vector load or store on the device (16 bytes at most).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// A thread's share: pooled pixel (n, h, w) and channels c .. c + V - 1. Items run in the pooled map's memory
// order: NHWC, the channels' groups of V of a pixel, then the next pixel; NCHW (V = 1), element by element.
template <typename I>
struct PoolItem {
  I n, c, h, w;
};
template <int V, typename I>
FT_HOST_DEVICE inline PoolItem<I> pool_item(I item, const PoolGeometry<I>& g) {
  if (g.channels_last) {
    const I groups = g.channels / V, pixel = item / groups, per_image = g.out_h * g.out_w;
    const I n = pixel / per_image, r = pixel - n * per_image, h = r / g.out_w;
    return {n, (item - pixel * groups) * V, h, r - h * g.out_w};
  }
  const I w = item % g.out_w, rows = item / g.out_w, h = rows % g.out_h, planes = rows / g.out_h;
  return {planes / g.channels, planes % g.channels, h, w};
}

// Forward of one item: each channel's window maximum into y and, unless argmax is null, its position (0..3) at
// the same offset. A is the comparison's type (float for the half types).
template <typename T, int V, typename A, typename I>
FT_HOST_DEVICE inline void max_pool_forward_item(const T* x, T* y, std::uint8_t* argmax, const PoolGeometry<I>& g,
                                                 I item) {
  const PoolItem<I> p = pool_item<V>(item, g);
  Pack<T, V> in[4];
  for (int k = 0; k < 4; ++k)
    in[k] = *reinterpret_cast<const Pack<T, V>*>(
        x + map_offset(p.n, p.c, 2 * p.h + k / 2, 2 * p.w + k % 2, g.channels, g.height, g.width, g.channels_last));
  Pack<T, V> out;
  Pack<std::uint8_t, V> at;
  for (int j = 0; j < V; ++j) {
    const A v[4] = {static_cast<A>(in[0].v[j]), static_cast<A>(in[1].v[j]), static_cast<A>(in[2].v[j]),
                    static_cast<A>(in[3].v[j])};
    window_max(v, &at.v[j]);
    const std::uint8_t k = at.v[j];  // a select, not in[k]: registers cannot be indexed at run time
    out.v[j] = k == 0 ? in[0].v[j] : k == 1 ? in[1].v[j] : k == 2 ? in[2].v[j] : in[3].v[j];
  }
  const I o = map_offset(p.n, p.c, p.h, p.w, g.channels, g.out_h, g.out_w, g.channels_last);
  *reinterpret_cast<Pack<T, V>*>(y + o) = out;
  if (argmax) *reinterpret_cast<Pack<std::uint8_t, V>*>(argmax + o) = at;
}

// Backward of one item: each channel's gradient to its window's maximum, zero to the window's other elements
// and, from the last pooled row and column, to an odd map's last input row and column (no window covers them),
// so that the items together write every input element once.
template <typename T, int V, typename I>
FT_HOST_DEVICE inline void max_pool_backward_item(const T* grad_y, const std::uint8_t* argmax, T* grad_x,
                                                  const PoolGeometry<I>& g, I item) {
  const PoolItem<I> p = pool_item<V>(item, g);
  const I o = map_offset(p.n, p.c, p.h, p.w, g.channels, g.out_h, g.out_w, g.channels_last);
  const Pack<T, V> grad = *reinterpret_cast<const Pack<T, V>*>(grad_y + o);
  const Pack<std::uint8_t, V> at = *reinterpret_cast<const Pack<std::uint8_t, V>*>(argmax + o);
  const int rows = window_span(p.h, g.out_h, g.height), cols = window_span(p.w, g.out_w, g.width);
  for (int dh = 0; dh < rows; ++dh)
    for (int dw = 0; dw < cols; ++dw) {
      Pack<T, V> out;
      for (int j = 0; j < V; ++j) out.v[j] = dh < 2 && dw < 2 && dh * 2 + dw == at.v[j] ? grad.v[j] : T{};
      *reinterpret_cast<Pack<T, V>*>(grad_x + map_offset(p.n, p.c, 2 * p.h + dh, 2 * p.w + dw, g.channels,
                                                         g.height, g.width, g.channels_last)) = out;
    }
}

}  // namespace ft
