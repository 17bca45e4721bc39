// What `fusetrain evaluate` measures of a trained network on one split, as plain structs:
// evaluation_file.cpp maps them to and from the /evaluation group of an HDF5 file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

struct EvaluationSummary {
  std::string split;       // "test" or "train"
  std::string checkpoint;  // the model file or checkpoint evaluated, as given
  std::string data;        // the data folder its images came from
  std::string dataset;     // the shards' data-set name
  std::string model;       // model.name
  std::string tta;         // test-time augmentation: none, flip, flip_translate
  std::int64_t images = 0;
  double loss = 0;             // mean cross-entropy with the run's label smoothing
  double label_smoothing = 0;
  double top1 = 0, top5 = 0;   // in [0,1]
  int top_k = 5;               // the k of top5: min(5, classes)
};

// One class's row of the per-class table.
struct ClassRecord {
  std::string name;
  double precision = 0, recall = 0, accuracy = 0;
  std::int64_t support = 0, predicted = 0;
};

struct EvaluationRecord {
  EvaluationSummary summary;
  std::vector<ClassRecord> classes;
  std::vector<std::int64_t> confusion;  // classes x classes, row-major: rows true class, columns predicted
  std::vector<float> logits;            // rows x classes, fp32 network outputs before softmax (may be empty)
  std::vector<std::int64_t> labels;     // the true class of each logits row
};

}  // namespace ft
