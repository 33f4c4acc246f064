// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_report_sample OUT_DIR: writes the synthetic sample report (sample_report.hpp) with
// write_report, as the input of the report's Chromium check (tests/report/check_html.sh).
#include <exception>
#include <iostream>

#include "nmsa/report.hpp"
#include "sample_report.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: nmsa_report_sample OUT_DIR\n";
    return 2;
  }
  try {
    nmsa::write_report(nmsa::testing::make_sample_report(), argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "nmsa_report_sample: " << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << argv[1] << "/report.json, report.md and index.html\n";
  return 0;
}
