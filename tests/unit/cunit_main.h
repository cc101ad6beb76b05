/* SPDX-License-Identifier: MIT */
/*
 * cunit_main.h - the few lines every CUnit suite's main() shares: run the
 * registered suites verbosely and turn failures into the exit status meson
 * reads.
 */
#ifndef ACCELFS_TESTS_CUNIT_MAIN_H
#define ACCELFS_TESTS_CUNIT_MAIN_H

#include <CUnit/Basic.h>

static inline int cunit_run(void)
{
	unsigned int failed;

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

#endif
