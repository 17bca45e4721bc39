// What a checkpoint must share with the run that resumes it: the config keys that change the numbers
// (not where, on how many ranks or how fast they are computed), as text, plus a readable diff.
#pragma once

#include <string>
#include <vector>

#include "config/schema.h"

namespace ft {

// The resolved config as YAML with every resume-neutral key at its default. Neutral: train.epochs and
// train.max_steps (a resumed run may train longer), train.warmup_steps (its state is thrown away), the device,
// threads, evaluation and checkpoint intervals, channels_last, profile.*, output.dir (a run folder may move to
// another disk), output.save_model, output.overwrite, elastic.* and every distributed.* key but compression,
// reproducible and micro_batches: moving a pre-empted run to another partition (GPU <-> CPU, another backend,
// another number of ranks: elastic.batch says how the batch follows) continues the same computation.
std::string run_fingerprint(const Config& config);

// The keys whose values differ, each as "key: A in the checkpoint, B now"; empty when equal. A key the
// checkpoint lacks (written before the key existed) matches when it is now at its default.
std::vector<std::string> fingerprint_differences(const std::string& stored, const std::string& current);

// 16 hex digits of FNV-1a over `text`: equal fingerprints give equal checkpoint names.
std::string fingerprint_digest(const std::string& text);

}  // namespace ft
