// braid-doctor: reads the flight recorder dumps of a job's ranks (BRAID_FLIGHT_RECORDER=<dir>,
// written on errors, lost peers and SIGUSR1) and says where each rank is and which rank the
// others wait for.
//
//   braid-doctor DIR_OR_FILE...     every braid-flight-*.txt of a directory, or the files given
//
// Dumps of several communicators are reported one communicator after another. Exit status: 0
// when every dump read, 1 when one did not (the others are still reported), 2 for bad usage.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "diagnosis.h"
#include "dump_reader.h"

namespace {

void usage(FILE* to) {
  fprintf(to,
          "usage: braid-doctor DIR_OR_FILE...\n"
          "  Reads braid's flight recorder dumps (BRAID_FLIGHT_RECORDER=<dir>: written on errors,\n"
          "  lost peers and SIGUSR1) and names the rank the others wait for.\n");
}

bool isDirectory(const std::string& path) {
  struct stat s {};
  return stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

std::vector<std::string> dumpsIn(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("braid-flight-", 0) == 0 && name.size() > 4 &&
        name.compare(name.size() - 4, 4, ".txt") == 0) {
      files.push_back(dir + "/" + name);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (!arg.empty() && arg[0] == '-') {
      fprintf(stderr, "braid-doctor: unknown option %s\n", arg.c_str());
      usage(stderr);
      return 2;
    }
    if (isDirectory(arg)) {
      const std::vector<std::string> found = dumpsIn(arg);
      if (found.empty()) fprintf(stderr, "braid-doctor: no braid-flight-*.txt in %s\n", argv[i]);
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    usage(stderr);
    return 2;
  }
  int status = 0;
  std::map<std::string, std::vector<braid::doctor::RankDump>> byComm;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) {
      fprintf(stderr, "braid-doctor: cannot read %s\n", file.c_str());
      status = 1;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    braid::Result<braid::doctor::RankDump> dump = braid::doctor::parseDump(text.str(), file);
    if (!dump.ok()) {
      fprintf(stderr, "braid-doctor: %s\n", dump.status().message().c_str());
      status = 1;
      continue;
    }
    std::vector<braid::doctor::RankDump>& dumps = byComm[dump.value().comm];
    // A rank dumped twice (an error, then SIGUSR1) keeps only its file's latest: one per rank.
    auto same = std::find_if(dumps.begin(), dumps.end(),
                             [&](const auto& d) { return d.rank == dump.value().rank; });
    if (same != dumps.end()) {
      *same = std::move(dump).value();
    } else {
      dumps.push_back(std::move(dump).value());
    }
  }
  for (const auto& [comm, dumps] : byComm) {
    const braid::doctor::Diagnosis d = braid::doctor::diagnose(dumps);
    printf("%s", braid::doctor::report(dumps, d).c_str());
  }
  return status;
}
