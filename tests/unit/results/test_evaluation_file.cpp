// The evaluation file of `fusetrain evaluate`: round trip of its /evaluation group (with and without
// logits), the errors naming a non-evaluation or damaged file, its tables and its field listing.
#include <gtest/gtest.h>

#include "io/h5.h"
#include "io/paths.h"
#include "results/evaluation_file.h"
#include "results/evaluation_tables.h"
#include "results/results_file.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

EvaluationRecord sample(bool with_logits) {
  EvaluationRecord r;
  r.summary = {"test", "runs/e2e.model", "data/fm", "fashion-mnist", "simple_cnn", "none", 5, 0.625, 0.1,
               0.6, 1.0, 3};
  r.classes = {{"T-shirt/top", 0.5, 1.0, 0.8, 1, 2}, {"Trou|ser", 1.0, 0.5, 0.8, 2, 1}, {"Bag", 1.0, 0.5, 1.0, 2, 2}};
  r.confusion = {1, 0, 0,  //
                 1, 1, 0,  //
                 0, 0, 2};
  if (with_logits) {
    r.logits = {0.5f, -1.25f, 2.0f, 3.0f, 0.0f, -0.5f};
    r.labels = {2, 0};
  }
  return r;
}

std::string temp_path(const std::string& name) {
  const std::string dir = paths::join(ft::test::temp_dir(), "evaluation");
  paths::create_directories(dir);
  return paths::join(dir, name);
}

std::string evaluation_error(const std::string& path) {
  try {
    read_evaluation(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EvaluationFile, RoundTripWithAndWithoutLogits) {
  for (const bool logits : {true, false}) {
    const std::string path = temp_path(logits ? "with.h5" : "without.h5");
    write_evaluation(path, sample(logits));
    const EvaluationRecord r = read_evaluation(path);
    EXPECT_EQ(r.summary.split, "test");
    EXPECT_EQ(r.summary.checkpoint, "runs/e2e.model");
    EXPECT_EQ(r.summary.images, 5);
    EXPECT_DOUBLE_EQ(r.summary.top1, 0.6);
    EXPECT_EQ(r.summary.top_k, 3);
    ASSERT_EQ(r.classes.size(), 3u);
    EXPECT_EQ(r.classes[1].name, "Trou|ser");
    EXPECT_DOUBLE_EQ(r.classes[0].precision, 0.5);
    EXPECT_EQ(r.classes[2].support, 2);
    EXPECT_EQ(r.confusion, sample(true).confusion);
    EXPECT_EQ(h5::dims(h5::open_file(path), "/evaluation/confusion"), (std::vector<hsize_t>{3, 3}));
    EXPECT_EQ(r.logits, sample(logits).logits);
    EXPECT_EQ(r.labels, sample(logits).labels);
    if (logits) EXPECT_EQ(h5::dims(h5::open_file(path), "/evaluation/logits"), (std::vector<hsize_t>{2, 3}));
  }
}

TEST(EvaluationFile, OtherAndDamagedFilesAreNamed) {
  const std::string path = temp_path("broken.h5");
  { h5::Handle file = h5::create_file(path); }
  EXPECT_EQ(evaluation_error(path).rfind(path + ": not a fusetrain evaluation file", 0), 0u) << evaluation_error(path);

  write_evaluation(path, sample(false));
  {
    h5::Handle file = h5::open_file(path, true);
    FT_CHECK_H5(H5Ldelete(file, "/evaluation/recall", H5P_DEFAULT));
  }
  EXPECT_NE(evaluation_error(path).find(path + ": /evaluation/recall: missing HDF5 dataset"), std::string::npos)
      << evaluation_error(path);

  EXPECT_NE(evaluation_error(temp_path("absent.h5")).find("absent.h5"), std::string::npos);
}

TEST(EvaluationFile, TablesNameTheClasses) {
  const EvaluationRecord r = sample(false);
  const std::string matrix = confusion_table(r, false);
  EXPECT_NE(matrix.find("| true \\ predicted | T-shirt/top | Trou\\|ser | Bag | total |"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find("| Trou\\|ser | 1 | 1 | 0 | 2 |"), std::string::npos) << matrix;
  EXPECT_NE(confusion_table(r, true).find("Trou|ser,1,1,0,2\n"), std::string::npos) << confusion_table(r, true);
  EXPECT_NE(class_table(r, false).find("| 0 | T-shirt/top | 1 | 2 | 50.00 | 100.00 | 80.00 |"), std::string::npos)
      << class_table(r, false);
  EXPECT_EQ(summary_line(r.summary), "evaluate: test accuracy 60.00% (top-3 100.00%), loss 0.6250 over 5 images");
}

// The matrix has one count per pair of classes: one short or one over of k x k is refused, not read past its end.
TEST(EvaluationFile, AConfusionMatrixOfAnotherSizeIsRefused) {
  EvaluationRecord r = sample(false);
  r.confusion.pop_back();
  EXPECT_THROW(confusion_table(r, false), Error);
  r.confusion.push_back(2);
  EXPECT_NO_THROW(confusion_table(r, false));
  r.confusion.push_back(0);
  EXPECT_THROW(confusion_table(r, false), Error);
}

TEST(EvaluationFile, FieldsAreListedWithTheResultsFields) {
  const auto json = results_fields_json();
  for (const char* entry :
       {R"("group": "/evaluation", "layout": "attributes", "name": "top5", "stored": "float64")",
        R"("group": "/evaluation", "layout": "columns", "name": "class_names", "stored": "string")",
        R"("group": "/evaluation", "layout": "columns", "name": "support", "stored": "int64")",
        R"("group": "/evaluation", "layout": "array", "name": "confusion", "stored": "int64", "shape": "[K,K]")",
        R"("group": "/evaluation", "layout": "array", "name": "logits", "stored": "float32", "shape": "[N,K]")"})
    EXPECT_NE(json.find(entry), std::string::npos) << entry;
}

}  // namespace
}  // namespace ft
