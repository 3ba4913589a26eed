"""Parametrised cases behind ``-m slow`` (benchmarks/results/suite_moved.md, round 12), marked by the conftest.

Round 12's rule: a test that took 0.1 s of CPU or more under CI's profile moved to ``-m slow`` unless it is the only
default check of a privacy guarantee, a refusal, a file format, a documented example or an entry point's start-up.
Whole test functions carry ``@pytest.mark.slow`` themselves; the cases below are those of parametrised families
whose other cases stay in the default suite (a family whose every default case was over the threshold keeps its
cheapest). The CPU seconds are round 12's measurement under CI's profile; the conftest refuses a listed case that is
no longer collected beside its test's other cases.
"""

SLOW_CASES = frozenset({
    "tests/cli/test_decode_ml_cli.py::test_record_marginals_and_joint_table_are_on_the_simplex[ml]",  # 0.10 s
    ("tests/cli/test_decode_progress_cli.py::test_decode_reports_progress_when_asked_and_is_silent_otherwise"
     "[structured]"),  # 0.13 s
    ("tests/cli/test_release_key_cli.py::test_a_structured_file_at_ten_thousand_inputs_gives_the_same_reports"
     "[.csv]"),  # 0.46 s
    ("tests/cli/test_release_key_cli.py::test_the_cli_releases_what_privatize_batch_gives_on_the_whole_table"
     "[memoized-in.csv]"),  # 0.11 s
    ("tests/cli/test_release_key_cli.py::test_the_cli_releases_what_privatize_batch_gives_on_the_whole_table"
     "[record-in.parquet]"),  # 0.14 s
    ("tests/cli/test_release_key_cli.py::test_the_cli_releases_what_privatize_batch_gives_on_the_whole_table"
     "[record-in.quoted.csv]"),  # 0.11 s
    ("tests/cli/test_release_key_cli.py::test_the_cli_releases_what_privatize_batch_gives_on_the_whole_table"
     "[two-layer-in.csv]"),  # 0.10 s
    "tests/cli/test_release_key_cli.py::test_the_outputs_do_not_depend_on_the_chunk_size[dense-.csv]",  # 0.27 s
    "tests/cli/test_release_key_cli.py::test_the_outputs_do_not_depend_on_the_chunk_size[record-.parquet]",  # 0.64 s
    "tests/cli/test_release_key_cli.py::test_the_outputs_do_not_depend_on_the_chunk_size[two-layer-.csv]",  # 0.35 s
    "tests/cli/test_robustness.py::test_signal_during_write_leaves_nothing[15-143]",  # 0.44 s
    "tests/deploy/analysis/test_decode.py::test_expected_counts_give_the_truth[em]",  # 0.17 s
    ("tests/deploy/analysis/test_symmetric_decode.py::test_seeds_read_in_one_piece_tally_as_the_digits_bit_for_bit"
     "[7-direct]"),  # 0.21 s
    ("tests/deploy/sampling/test_arrow_ipc.py::test_records_from_ipc_are_the_labels_released_from_parquet_and_csv"
     "[joint-1-777]"),  # 0.12 s
    ("tests/deploy/sampling/test_privatize.py::test_a_csv_output_is_compressed_as_its_name_says"
     "[.csv.xz-.csv.gz]"),  # 0.17 s
    "tests/deploy/sampling/test_privatize.py::test_a_csv_output_is_compressed_as_its_name_says[.csv.xz-.csv]",  # 0.16 s
    "tests/deploy/sampling/test_privatize.py::test_fast_path_is_the_reference_rule_on_its_own_words[3]",  # 0.20 s
    ("tests/deploy/sampling/test_record_arrow.py::test_parquet_releases_the_labels_of_the_string_path"
     "[product-65536-1000-False]"),  # 0.93 s
    ("tests/deploy/sampling/test_record_arrow.py::test_the_splice_releases_what_the_pyarrow_writer_releases"
     "[joint-True]"),  # 0.35 s
    "tests/deploy/sampling/test_record_io.py::test_seeded_output_does_not_depend_on_chunk_size[csv]",  # 0.25 s
    "tests/deploy/sampling/test_record_stream.py::test_a_failure_on_any_thread_writes_nothing[read]",  # 0.14 s
    "tests/deploy/sampling/test_record_stream.py::test_a_failure_on_any_thread_writes_nothing[sample]",  # 0.16 s
    ("tests/deploy/sampling/test_splice.py::test_a_row_group_sorted_by_a_released_column_is_no_longer_said_sorted"
     "[0-True]"),  # 0.10 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[Snappy, row groups of a chunk]"),  # 0.27 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[ZSTD, smaller row groups]"),  # 0.35 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[dictionary ids, LZ4, page v2]"),  # 0.24 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[leaves with 0 children]"),  # 0.22 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[page index]"),  # 0.18 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[plain, uncompressed]"),  # 0.20 s
    ("tests/deploy/sampling/test_splice.py::test_the_spliced_output_reads_back_as_the_pyarrow_writers"
     "[polars, zstd]"),  # 0.19 s
    ("tests/deploy/sampling/test_splice.py::test_where_the_splice_does_not_apply_pyarrow_writes_and_says_so"
     "[<lambda>-row group 0 holds 150,000 records, more than a chunk (65,536)]"),  # 0.18 s
    ("tests/deploy/sampling/test_splice.py::test_where_the_splice_does_not_apply_pyarrow_writes_and_says_so"
     "[<lambda>-row groups of 5,000 records on average, fewer than 8,192]"),  # 0.18 s
    ("tests/deploy/sampling/test_splice.py::test_without_the_kernels_copy_the_kept_bytes_are_read_and_written"
     "[EXDEV]"),  # 0.11 s
    ("tests/deploy/sampling/test_splice.py::test_without_the_kernels_copy_the_kept_bytes_are_read_and_written"
     "[no such call]"),  # 0.10 s
    ("tests/deploy/sampling/test_symmetric_sampler.py::"
     "test_one_radix_signature_takes_each_group_by_one_constant_and_gives_the_same_reports"
     "[0]"),  # 0.29 s
    ("tests/deploy/sampling/test_symmetric_sampler.py::"
     "test_the_rule_gives_every_seed_placing_the_input_at_its_level_equally_often"
     "[4]"),  # 0.16 s
    ("tests/deploy/sampling/test_symmetric_sampler.py::"
     "test_the_vectorised_rule_equals_the_rule_record_by_record_on_words_near_the_top"
     "[0]"),  # 0.16 s
    ("tests/deploy/sampling/test_symmetric_stream.py::test_a_seeded_run_is_the_same_whatever_the_chunk_size"
     "[.csv-1048576]"),  # 0.97 s
    ("tests/deploy/sampling/test_symmetric_stream.py::test_a_seeded_run_is_the_same_whatever_the_chunk_size"
     "[.parquet-1048576]"),  # 0.86 s
    ("tests/deploy/sampling/test_symmetric_tables.py::test_sample_words_follows_the_rule_record_by_record"
     "[small]"),  # 0.11 s
    ("tests/deploy/sampling/test_symmetric_tables.py::test_sample_words_follows_the_rule_record_by_record"
     "[wide]"),  # 0.12 s
    "tests/deploy/test_attacks.py::test_a_record_file_privatizes_to_a_compressed_name_and_decodes[.csv.xz]",  # 0.11 s
    ("tests/deploy/test_attacks.py::test_privatize_writes_what_its_output_name_says_and_decode_reads_it"
     "[.csv.xz]"),  # 0.18 s
    ("tests/deploy/test_attacks_fourth.py::test_a_design_at_an_epsilon_beyond_exp_overflow_is_written_and_verifies"
     "[estimation_mse-counts2-800]"),  # 0.20 s
    "tests/deploy/test_dask.py::test_counts_and_decode_beside_the_written_copy[dense]",  # 0.15 s
    "tests/deploy/test_dask.py::test_counts_and_decode_beside_the_written_copy[record]",  # 0.19 s
    "tests/deploy/test_dask.py::test_counts_and_decode_beside_the_written_copy[structured]",  # 0.18 s
    "tests/deploy/test_dask.py::test_counts_and_decode_beside_the_written_copy[two-layer]",  # 0.18 s
    "tests/deploy/test_dask.py::test_dask_releases_what_the_deployment_releases[dense]",  # 0.28 s
    "tests/deploy/test_dask.py::test_dask_releases_what_the_deployment_releases[memoized]",  # 0.27 s
    "tests/deploy/test_dask.py::test_dask_releases_what_the_deployment_releases[record]",  # 0.22 s
    "tests/deploy/test_dask.py::test_dask_releases_what_the_deployment_releases[two-layer]",  # 0.34 s
    "tests/deploy/test_dask.py::test_the_release_statement_is_the_python_api_s[memoized]",  # 0.10 s
    "tests/deploy/test_dask.py::test_the_release_statement_is_the_python_api_s[record]",  # 0.10 s
    "tests/deploy/test_dask.py::test_the_release_statement_is_the_python_api_s[two-layer]",  # 0.10 s
    "tests/design/test_calibrated_start.py::test_a_field_family_is_an_exact_two_design[81-20-8-38]",  # 0.30 s
    "tests/design/test_closed_form.py::test_calibrated_randomized_response_is_largest_by_bisection[0.3-1.0]",  # 0.11 s
    "tests/design/test_closed_form.py::test_calibrated_randomized_response_is_largest_by_bisection[1.0-0.2]",  # 0.12 s
    ("tests/design/test_estimation_linear.py::test_marginals_of_a_2x2_alphabet_match_the_brute_force_optimum"
     "[2.0]"),  # 0.13 s
    ("tests/design/test_estimation_linear.py::test_one_category_under_ldp_is_randomized_response_on_its_indicator"
     "[prior0-1.0-0]"),  # 0.31 s
    ("tests/design/test_ldp_field_large.py::test_the_field_at_one_hundred_thousand_values_allocates_no_matrix"
     "[1.0]"),  # 0.35 s
    "tests/design/test_ldp_oracles.py::test_variance_formula_by_simulation[2.0-hadamard]",  # 0.19 s
    "tests/design/test_ldp_oracles.py::test_variance_formula_by_simulation[2.0-subset_selection]",  # 0.13 s
    "tests/design/test_longitudinal.py::test_the_variance_matches_a_simulation_of_the_two_layers[l-osue]",  # 0.25 s
    ("tests/design/test_pricing.py::test_large_alphabet_under_a_short_time_limit_is_certified_and_honest"
     "[chi_squared]"),  # 0.12 s
    "tests/design/test_pricing.py::test_pricing_rediscovers_the_catalogue_optima[adult-education]",  # 0.42 s
    "tests/design/test_problem.py::test_constraint_forms_agree_with_exact_capacity[0.0-forms0]",  # 0.88 s
    ("tests/design/test_problems_catalogue.py::test_large_alphabets_load_with_their_ldp_closed_forms"
     "[english-100000]"),  # 0.13 s
    ("tests/design/test_separable.py::test_sdp_refinement_closes_most_of_the_gap_from_a_poor_design"
     "[counts1-1.0-0.0-estimation_mse]"),  # 0.41 s
    ("tests/design/test_separable.py::test_structured_bound_is_below_the_enumerated_optimum"
     "[estimation_logdet-counts5-0.7-0.05]"),  # 0.36 s
    ("tests/design/test_separable.py::test_structured_bound_is_below_the_enumerated_optimum"
     "[estimation_mse-counts0-1.0-0.0]"),  # 0.30 s
    ("tests/design/test_separable.py::test_structured_bound_is_below_the_enumerated_optimum"
     "[estimation_mse-counts3-2.0-2.0]"),  # 0.31 s
    "tests/mechfile/test_binding.py::test_adult_round_trip_design_sign_verify_privatize_decode[csv]",  # 0.27 s
    "tests/noise/test_additive_gaussian.py::test_delta1_against_very_dense_grid[0.2-2.0-0.3-0.17]",  # 0.33 s
    ("tests/noise/test_histogram_exact.py::test_theorem4_bound_holds_and_is_attained_at_the_smallest_bin"
     "[prior1-others1-0.5]"),  # 0.31 s
    "tests/noise/test_sparse.py::test_a_delta_near_one_is_calibrated[0.0-0.5-csh-tighter-quad]",  # 0.10 s
    "tests/noise/test_sparse.py::test_a_delta_near_one_is_calibrated[0.0-0.999-csh-tighter-quad]",  # 0.10 s
    "tests/noise/test_sparse.py::test_a_delta_near_one_is_calibrated[0.35-0.999999999999-csh-add-quad]",  # 0.12 s
    "tests/noise/test_sparse.py::test_minimal_thresholds_at_sigma_min[0.35-50000-13641.7763-7293.2859]",  # 0.40 s
    "tests/noise/test_sparse.py::test_quadrature_thresholds[0.35-50000-7293.29-6851.39]",  # 0.33 s
    ("tests/noise/test_sparse_soundness.py::test_exact_profile_reproduces_wilkins_without_shared_noise"
     "[sigma1-tau2.5-eps0.5-2]"),  # 0.24 s
    "tests/noise/test_sparse_soundness.py::test_shipped_csh_analyses_bound_the_exact_profile[2-0.4-3.0-1.0]",  # 0.29 s
    "tests/records/test_record_baselines.py::test_simulation_matches_the_variance[smp-hadamard-iid-100]",  # 0.16 s
    ("tests/records/test_record_found_cases.py::test_the_exact_phase_doubles_its_blocks_up_to_the_entry_cap"
     "[4]"),  # 0.19 s
    "tests/records/test_sampled_design.py::test_mse_formula_against_simulation[optimise]",  # 0.45 s
    "tests/test_bench_samplers.py::test_one_subset_selection_report_has_the_matrix_law[fast-7-3-400]",  # 0.46 s
    "tests/test_datasets.py::test_the_columns_are_what_a_parse_of_just_those_columns_gives[columns3]",  # 0.20 s
})
