// The channels_last layout of a network's parameters: set_data keeps each parameter's identity, so this
// may run after hooks or an optimizer took references to them.
#include "models/channels_last.h"

namespace ft {

void use_channels_last(Network& network) {
  at::NoGradGuard no_grad;
  for (auto& p : network.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
}

}  // namespace ft
