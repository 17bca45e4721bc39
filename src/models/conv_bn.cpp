// ConvBN's submodules ("conv", "bn") and forward pass: bn(conv(x)), no activation.
// The convolution has no bias because the batch norm's shift would cancel it.
#include "models/conv_bn.h"

namespace ft {

ConvBNImpl::ConvBNImpl(std::int64_t in_channels_, std::int64_t out_channels_, std::int64_t kernel_,
                       std::int64_t stride_)
    : in_channels(in_channels_), out_channels(out_channels_), kernel(kernel_), stride(stride_) {
  reset();
}

void ConvBNImpl::reset() {
  conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, out_channels, kernel)
                                                        .stride(stride)
                                                        .padding(kernel / 2)
                                                        .bias(false)));
  bn = register_module("bn", SyncBatchNorm2d(out_channels));
}

at::Tensor ConvBNImpl::forward(const at::Tensor& x) { return bn->forward(conv->forward(x)); }

}  // namespace ft
