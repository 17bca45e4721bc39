// The results file's fields, declared once: every attribute and table column of /, /provenance,
// /epochs, /ranks, /rank_epochs, /utilization, /model and /summary with its type and meaning; and those of the
// /evaluation group that `fusetrain evaluate` writes to a file of its own.
#pragma once

#include <string>

#include "results/evaluation_record.h"
#include "results/field_table.h"
#include "results/run_record.h"

namespace ft {

constexpr std::int64_t kResultsFormatVersion = 4;
constexpr std::int64_t kEvaluationFormatVersion = 1;

const FieldGroup<RunRecord>& run_attribute_fields();   // "/" attributes (name, model, ...)
const FieldGroup<RunRecord>& run_text_fields();        // "/config"
const FieldGroup<Provenance>& provenance_fields();     // "/provenance" attributes
const FieldGroup<EpochRecord>& epoch_fields();         // "/epochs" columns
const FieldGroup<RankRecord>& rank_fields();           // "/ranks" columns
const FieldGroup<RankEpochRecord>& rank_epoch_fields();  // "/rank_epochs" columns
const FieldGroup<UtilizationSample>& utilization_fields();  // "/utilization" columns
const FieldGroup<ModelLayer>& model_fields();          // "/model" columns
const FieldGroup<RunSummary>& summary_fields();        // "/summary" attributes
const FieldGroup<EvaluationSummary>& evaluation_fields();    // "/evaluation" attributes
const FieldGroup<ClassRecord>& evaluation_class_fields();    // "/evaluation" columns, one row per class
const ArrayGroup& evaluation_array_fields();                 // "/evaluation" matrices

// Every field as JSON, for tools that read results files without this code:
// {"format": ..., "format_version": N, "fields": [{"group", "layout", "name", "stored", "meaning"}]};
// arrays (layout "array") also carry "shape". The /evaluation fields belong to evaluation files.
std::string results_fields_json();

}  // namespace ft
