// exports_test.cc: what libnccl.so.2 offers to the programs that load it.
//
// braid is a guest in large processes, so its shared library must export the NCCL C API and
// nothing else (the export map src/api/libnccl.map): no C++ internals, no statically linked
// third-party code that could clash with the host's copy. And because it replaces NVIDIA's
// library, every function of nccl.h, with its pnccl twin, must be there under the same soname.
//
// The tests read the dynamic symbol table of the library this binary actually loaded, straight
// from its ELF file, so they need no external tool such as nm.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/abi_facts.h"
#include "nccl.h"

namespace {

/// Path of the loaded object whose file name starts with "libnccl.so", or "" if none is loaded.
std::string loadedNcclPath() {
  // A reference the optimizer cannot drop, so that the linker records libnccl.so.2 as needed
  // (with --as-needed it would otherwise leave it out of a binary that calls nothing in it).
  static void* volatile keepLinked = reinterpret_cast<void*>(&ncclGetVersion);
  (void)keepLinked;
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const char* base = std::strrchr(name, '/');
        base = base == nullptr ? name : base + 1;
        if (std::strncmp(base, "libnccl.so", std::strlen("libnccl.so")) != 0) return 0;
        *static_cast<std::string*>(data) = name;
        return 1;
      },
      &found);
  return found;
}

/// A dlopen handle on an already loaded library, closed on destruction.
class LoadedLibrary {
 public:
  explicit LoadedLibrary(const std::string& path)
      : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {}
  ~LoadedLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  void* handle() const { return handle_; }

 private:
  void* handle_;
};

/// The parts of an ELF shared object's dynamic linking information these tests check.
struct DynamicInfo {
  std::vector<std::string> definedSymbols;  // global or weak, defined in this object
  std::string soname;
};

/// Copies a T out of `bytes` at `offset`; false when it would read past the end.
template <typename T>
bool readAt(const std::vector<char>& bytes, size_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

/// The NUL-terminated string at `offset` of the string table `table`, or "" when out of range.
std::string stringAt(const std::vector<char>& bytes, const Elf64_Shdr& table, size_t offset) {
  if (offset >= table.sh_size || table.sh_offset + table.sh_size > bytes.size()) return "";
  const char* begin = bytes.data() + table.sh_offset + offset;
  return std::string(begin, strnlen(begin, table.sh_size - offset));
}

/// Reads the dynamic symbols and the soname of the 64-bit ELF file at `path`. Returns an error
/// message, empty on success.
std::string readDynamicInfo(const std::string& path, DynamicInfo* info) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "cannot open " + path;
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  Elf64_Ehdr header;
  if (!readAt(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return path + " is not an ELF file";
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return path + " is not a 64-bit ELF file";
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!readAt(bytes, header.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) {
      return "truncated section headers";
    }
  }
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_DYNSYM && section.sh_type != SHT_DYNAMIC) continue;
    if (section.sh_link >= sections.size() || section.sh_entsize == 0) return "bad section";
    const Elf64_Shdr& strings = sections[section.sh_link];
    const size_t count = section.sh_size / section.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      const size_t offset = section.sh_offset + i * section.sh_entsize;
      if (section.sh_type == SHT_DYNSYM) {
        Elf64_Sym symbol;
        if (!readAt(bytes, offset, &symbol)) return "truncated symbol table";
        if (symbol.st_shndx == SHN_UNDEF || ELF64_ST_BIND(symbol.st_info) == STB_LOCAL) continue;
        info->definedSymbols.push_back(stringAt(bytes, strings, symbol.st_name));
      } else {
        Elf64_Dyn entry;
        if (!readAt(bytes, offset, &entry)) return "truncated dynamic section";
        if (entry.d_tag == DT_SONAME) info->soname = stringAt(bytes, strings, entry.d_un.d_val);
      }
    }
  }
  return "";
}

bool hasApiPrefix(const std::string& name) {
  return name.rfind("nccl", 0) == 0 || name.rfind("pnccl", 0) == 0 || name.rfind("braid", 0) == 0;
}

std::vector<std::string> declaredFunctions() {
  std::vector<std::string> names;
#define BRAID_EXPORTS_NAME_ONE(fn) \
  names.push_back(#fn);            \
  names.push_back("p" #fn);
  BRAID_NCCL_FUNCTIONS(BRAID_EXPORTS_NAME_ONE)
#undef BRAID_EXPORTS_NAME_ONE
  return names;
}

class ExportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = loadedNcclPath();
    ASSERT_FALSE(path_.empty()) << "braid_api_tests did not load libnccl.so.2";
    const std::string error = readDynamicInfo(path_, &info_);
    ASSERT_EQ(error, "");
  }

  std::string path_;
  DynamicInfo info_;
};

TEST_F(ExportsTest, SonameIsNcclMajorTwo) { EXPECT_EQ(info_.soname, "libnccl.so.2"); }

TEST_F(ExportsTest, OnlyApiSymbolsAreExported) {
  EXPECT_FALSE(info_.definedSymbols.empty());
  for (const std::string& name : info_.definedSymbols) {
    EXPECT_TRUE(hasApiPrefix(name)) << path_ << " exports " << name;
  }
}

TEST_F(ExportsTest, EveryDeclaredFunctionIsExported) {
  for (const std::string& name : declaredFunctions()) {
    bool found = false;
    for (const std::string& exported : info_.definedSymbols) found = found || exported == name;
    EXPECT_TRUE(found) << path_ << " does not export " << name;
  }
}

TEST_F(ExportsTest, EveryDeclaredFunctionResolvesWithDlsym) {
  LoadedLibrary library(path_);
  ASSERT_NE(library.handle(), nullptr) << dlerror();
  for (const std::string& name : declaredFunctions()) {
    void* address = dlsym(library.handle(), name.c_str());
    EXPECT_NE(address, nullptr) << name;
    if (address == nullptr) continue;
    Dl_info where;
    ASSERT_NE(dladdr(address, &where), 0) << name;
    EXPECT_STREQ(where.dli_fname, path_.c_str()) << name << " resolves outside libnccl.so.2";
  }
}

// The names a function list (nccl_2_*_functions.txt) holds, the first word of each line that is
// neither empty nor a comment, and those of them (or their twins) that `exported` lacks.
struct ListCheck {
  size_t listed = 0;
  std::vector<std::string> missing;
};

ListCheck checkList(const char* path, const std::vector<std::string>& exported) {
  ListCheck check;
  std::ifstream list(path);
  EXPECT_TRUE(list) << "cannot read " << path;
  for (std::string line; std::getline(list, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find_first_of(" \t"));
    ++check.listed;
    for (const std::string& wanted : {name, "p" + name}) {
      bool found = false;
      for (const std::string& ours : exported) found = found || ours == wanted;
      if (!found) check.missing.push_back(wanted);
    }
  }
  return check;
}

// Every function NVIDIA's libnccl.so.2 2.30.7 exports, and its pnccl twin, is in braid's: the
// list (nccl_2_30_7_functions.txt) says how it was made from NVIDIA's sources.
TEST_F(ExportsTest, EveryFunctionOfNccl2307IsExportedWithItsTwin) {
  const ListCheck check = checkList(BRAID_NCCL_FUNCTION_LIST, info_.definedSymbols);
  EXPECT_EQ(check.listed, 82u) << "the list of NCCL 2.30.7's functions changed";
  EXPECT_TRUE(check.missing.empty()) << path_ << " lacks " << check.missing.size() << ", the first "
                                     << (check.missing.empty() ? "" : check.missing.front());
}

// The same of 2.32.3's (nccl_2_32_3_functions.txt, which names the sources of what 2.31 and 2.32
// added).
TEST_F(ExportsTest, EveryFunctionOfNccl2323IsExportedWithItsTwin) {
  const ListCheck check = checkList(BRAID_NCCL_2_32_FUNCTION_LIST, info_.definedSymbols);
  EXPECT_EQ(check.listed, 97u) << "the list of NCCL 2.32.3's functions changed";
  EXPECT_TRUE(check.missing.empty()) << path_ << " lacks " << check.missing.size() << ", the first "
                                     << (check.missing.empty() ? "" : check.missing.front());
}

// Every symbol NVIDIA's libnccl.so.2 exports is in braid's, so that no program linked against
// NVIDIA's fails to load braid's in its place. NVIDIA's library is read where CUDA installs it, or
// at BRAID_NVIDIA_NCCL.
TEST_F(ExportsTest, EverySymbolOfNvidiasLibraryIsExported) {
  const char* env = getenv("BRAID_NVIDIA_NCCL");
  const std::string nvidia = env != nullptr ? env : "/usr/local/cuda/lib64/libnccl.so.2";
  DynamicInfo theirs;
  const std::string error = readDynamicInfo(nvidia, &theirs);
  if (!error.empty()) GTEST_SKIP() << "no NVIDIA libnccl.so.2 to compare with: " << error;
  ASSERT_FALSE(theirs.definedSymbols.empty());
  std::vector<std::string> missing;
  for (const std::string& name : theirs.definedSymbols) {
    bool found = false;
    for (const std::string& ours : info_.definedSymbols) found = found || ours == name;
    if (!found) missing.push_back(name);
  }
  std::string list;
  for (const std::string& name : missing) list += " " + name;
  EXPECT_TRUE(missing.empty()) << path_ << " lacks " << missing.size() << " of the "
                               << theirs.definedSymbols.size() << " symbols " << nvidia
                               << " exports:" << list;
}

// The list is shared with abi_test.cc, whose typeid use of every entry proves that each names a
// function of nccl.h; this pins its length, so that a function dropped from it is noticed.
TEST(ExportsListTest, CoversTheWholeApi) { EXPECT_EQ(declaredFunctions().size(), 82u); }

}  // namespace
