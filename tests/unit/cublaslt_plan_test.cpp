// The note an autotuned cuBLASLt plan leaves (include/aisp/cublaslt_plan.hpp): what it says, and
// that it fits a note whatever the values. The tuning itself runs on the device (tests/gpu/).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "aisp/cublaslt_plan.hpp"
#include "aisp/run_context.hpp"
#include "harness/variant_notes.hpp"

namespace {

TEST(cublaslt_choice, describes_the_winner_its_rank_and_the_first_guess_it_beat) {
  aisp::cublaslt_choice choice;
  choice.algo_id = 66;
  choice.tile_id = 24;
  choice.stages_id = 27;
  choice.cluster_shape_id = 2;
  choice.split_k = 1;
  choice.swizzle = 1;
  choice.heuristic_rank = 3;
  choice.offered = 16;
  choice.timed = 15;
  choice.winner_s = 1.412e-3;
  choice.first_s = 1.4551e-3;
  EXPECT_EQ(aisp::describe(choice),
            "algo 66 tile 24 stages 27 cluster 2 split_k 1 reduction 0 swizzle 1 custom 0: rank 3 of 16 "
            "heuristic candidates (15 timed), 1.412 ms; rank 1 1.455 ms");
}

TEST(cublaslt_choice, a_first_guess_that_did_not_run_is_said_and_times_keep_a_readable_unit) {
  aisp::cublaslt_choice choice;
  choice.heuristic_rank = 2;
  choice.offered = 2;
  choice.timed = 1;
  choice.winner_s = 12.34e-6;
  EXPECT_EQ(aisp::describe(choice),
            "algo 0 tile 0 stages 0 cluster 0 split_k 0 reduction 0 swizzle 0 custom 0: rank 2 of 2 "
            "heuristic candidates (1 timed), 12.3 us; rank 1 did not run");
  choice.winner_s = 2.5;
  choice.first_s = 2.75;
  EXPECT_NE(aisp::describe(choice).find("2.5 s; rank 1 2.75 s"), std::string::npos);
}

TEST(cublaslt_choice, the_longest_description_still_fits_a_note) {
  aisp::cublaslt_choice widest;
  constexpr int int_min = std::numeric_limits<int>::min();
  constexpr unsigned unsigned_max = std::numeric_limits<unsigned>::max();
  widest.algo_id = widest.split_k = widest.heuristic_rank = widest.offered = widest.timed = int_min;
  widest.tile_id = widest.stages_id = widest.cluster_shape_id = unsigned_max;
  widest.reduction_scheme = widest.swizzle = widest.custom_option = unsigned_max;
  for (const double seconds : {-1e300, 1e300, std::nan(""), -std::numeric_limits<double>::infinity(), 9.9996e-4}) {
    widest.winner_s = widest.first_s = seconds;
    const auto text = aisp::describe(widest);
    EXPECT_LE(text.size(), aisp::max_note_value_chars) << text;
    aisp::variant_notes notes;
    EXPECT_NO_THROW(notes.add(aisp::cublaslt_plan::note_key, text)) << text;
  }
}

TEST(cublaslt_choice, a_later_candidate_wins_only_when_faster_by_more_than_the_margin) {
  const double held = 100e-6;
  EXPECT_TRUE(aisp::cublaslt_plan::displaces(held * 0.97, held));
  EXPECT_FALSE(aisp::cublaslt_plan::displaces(held * 0.99, held));  // within noise: the earlier rank stays
  EXPECT_FALSE(aisp::cublaslt_plan::displaces(held, held));
  EXPECT_TRUE(aisp::cublaslt_plan::displaces(1.0, std::numeric_limits<double>::infinity()));  // the first that runs
}

}  // namespace
