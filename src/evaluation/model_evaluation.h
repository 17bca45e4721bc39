// `fusetrain evaluate` without its command line: a trained network (model file or checkpoint) scored on
// one split of a data folder, each rank over its slice, with the evaluation settings of its run's config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/choices.h"
#include "config/schema.h"
#include "results/evaluation_record.h"

namespace ft {

class World;

struct EvaluationRequest {
  std::string model_path;               // <run>.model or a training checkpoint (.ckpt)
  std::string config_path;              // replaces the stored config's data/evaluation settings ("": none)
  std::string data_dir;                 // replaces data.path ("": the config's)
  std::string split = "test";           // test or train
  std::optional<Tta> tta;               // replaces train.tta
  int batch = 0;                        // replaces data.test_batch_size (0: keep)
  DeviceChoice device = DeviceChoice::automatic;
  std::int64_t keep_logits = 0;         // record the logits and labels of the split's first N images
};

// Throws ft::Error naming the option when the request cannot be valid whatever the files hold.
void validate_request(const EvaluationRequest& request);

// Collective: every rank calls it and gets the same record. Throws ft::Error naming the file, option or
// key at fault: a file that is no fusetrain model, data of another shape or classes, a --config whose
// model section differs from the stored one.
EvaluationRecord evaluate_model(const EvaluationRequest& request, const World& world);

// The keys of the model section whose values differ between `a` and `b`, as "model.key: A vs B".
std::vector<std::string> model_differences(const Config& a, const Config& b);

}  // namespace ft
