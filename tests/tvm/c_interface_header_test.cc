// The reader of TVM's C interface header (tvm/c_interface_header.h) on headers in the exact form
// v0.18.0's src/target/source/interface_c.cc emits them.
#include "tvm/c_interface_header.h"

#include <gtest/gtest.h>

#include <string>

namespace aotfuzz::tvm {
namespace {

// interface_c.cc's header guard, size macros, structs and run prototype for module "default"
// with one external workspace pool and one constant pool (USMP, WorkspaceMemoryPools and
// ConstantMemoryPools), inputs x and y, output "output".
constexpr const char* kPoolsHeader = R"(#ifndef TVMGEN_DEFAULT_H_
#define TVMGEN_DEFAULT_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Input tensor x size (in bytes) for TVM module "default" 
 */
#define TVMGEN_DEFAULT_X_SIZE 32
/*!
 * \brief Input tensor y size (in bytes) for TVM module "default" 
 */
#define TVMGEN_DEFAULT_Y_SIZE 32
/*!
 * \brief Output tensor output size (in bytes) for TVM module "default" 
 */
#define TVMGEN_DEFAULT_OUTPUT_SIZE 32
/*!
 * \brief Input tensor pointers for TVM module "default" 
 */
struct tvmgen_default_inputs {
  void* x;
  void* y;
};

/*!
 * \brief Output tensor pointers for TVM module "default" 
 */
struct tvmgen_default_outputs {
  void* output;
};

/*!
 * \brief Workspace pool pointers for TVM module "default" 
 */
struct tvmgen_default_workspace_pools {
  void* aotfuzz_workspace;
  void* aotfuzz_constants;
};

/*!
 * \brief entrypoint function for TVM module "default"
 * \param inputs Input tensors for the module 
 * \param outputs Output tensors for the module 
 * \param workspace_pools Workspace memory pool pointers for the module 
 */
int32_t tvmgen_default_run(
  struct tvmgen_default_inputs* inputs,
  struct tvmgen_default_outputs* outputs,
  struct tvmgen_default_workspace_pools* workspace_pools
);
/*!
 * \brief Workspace size for TVM module "default" 
 */
#define TVMGEN_DEFAULT_WORKSPACE_SIZE 0
/*!
 * \brief aotfuzz_workspace size for TVM module "default" 
 */
#define TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE 96
/*!
 * \brief aotfuzz_constants initialization data for TVM module "default" 
 */
#define TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_SIZE 8
#define TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_DATA \
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40\


#ifdef __cplusplus
}
#endif

#endif // TVMGEN_DEFAULT_H_
)";

// The same module with USMP's workspace-io: map functions, and a run without inputs and outputs.
constexpr const char* kWorkspaceIoHeader = R"(#ifndef TVMGEN_MY_MOD_H_
#define TVMGEN_MY_MOD_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Input tensor pointers for TVM module "my_mod" 
 */
struct tvmgen_my_mod_inputs {
  void* x;
};

/*!
 * \brief Output tensor pointers for TVM module "my_mod" 
 */
struct tvmgen_my_mod_outputs {
  void* output;
};

/*!
 * \brief Workspace pool pointers for TVM module "my_mod" 
 */
struct tvmgen_my_mod_workspace_pools {
  void* aotfuzz_workspace;
};

/*!
 * \brief Maps I/O inside the workspace pools for TVM module "my_mod"
 * \param workspace_pools Workspace memory pool struct for the module 
 * \return I/O tensor struct for the module 
 */
struct tvmgen_my_mod_inputs tvmgen_my_mod_map_inputs(
  struct tvmgen_my_mod_workspace_pools* workspace_pools
);

/*!
 * \brief Maps I/O inside the workspace pools for TVM module "my_mod"
 * \param workspace_pools Workspace memory pool struct for the module 
 * \return I/O tensor struct for the module 
 */
struct tvmgen_my_mod_outputs tvmgen_my_mod_map_outputs(
  struct tvmgen_my_mod_workspace_pools* workspace_pools
);

/*!
 * \brief entrypoint function for TVM module "my_mod"
 * \param workspace_pools Workspace memory pool pointers for the module 
 */
int32_t tvmgen_my_mod_run(
  struct tvmgen_my_mod_workspace_pools* workspace_pools
);
/*!
 * \brief Workspace size for TVM module "my_mod" 
 */
#define TVMGEN_MY_MOD_WORKSPACE_SIZE 0
/*!
 * \brief aotfuzz_workspace size for TVM module "my_mod" 
 */
#define TVMGEN_MY_MOD_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE 64

#ifdef __cplusplus
}
#endif

#endif // TVMGEN_MY_MOD_H_
)";

// Without USMP's external pools: TVM's header of every earlier case.
constexpr const char* kPlainRun = R"(struct tvmgen_default_inputs {
  void* x;
};

struct tvmgen_default_outputs {
  void* output;
};

int32_t tvmgen_default_run(
  struct tvmgen_default_inputs* inputs,
  struct tvmgen_default_outputs* outputs
);
)";

TEST(InterfaceHeader, ReadsTheStructsPoolsAndRunParametersOfAHeaderWithExternalPools) {
  const InterfaceHeader h = read_interface_header(kPoolsHeader, "tvmgen_default");
  EXPECT_EQ(h.inputs, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(h.outputs, (std::vector<std::string>{"output"}));
  EXPECT_TRUE(h.devices.empty());
  EXPECT_FALSE(h.map_inputs);
  EXPECT_FALSE(h.map_outputs);
  EXPECT_EQ(h.run_params, (std::vector<std::string>{"inputs", "outputs", "workspace_pools"}));
  ASSERT_EQ(h.pools.size(), 2u);
  EXPECT_EQ(h.pools[0],
            (InterfacePool{"aotfuzz_workspace",
                           "TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE", 96, false, ""}));
  EXPECT_EQ(
      h.pools[1],
      (InterfacePool{"aotfuzz_constants", "TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_SIZE", 8,
                     true, "TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_DATA"}));
  EXPECT_EQ(h.integer_macros.at("TVMGEN_DEFAULT_X_SIZE"), 32);
  EXPECT_EQ(h.integer_macros.at("TVMGEN_DEFAULT_WORKSPACE_SIZE"), 0);
}

TEST(InterfaceHeader, AWorkspaceIoHeaderMapsInputsAndOutputsAndRunsOnThePoolsAlone) {
  const InterfaceHeader h = read_interface_header(kWorkspaceIoHeader, "tvmgen_my_mod");
  EXPECT_TRUE(h.map_inputs);
  EXPECT_TRUE(h.map_outputs);
  EXPECT_EQ(h.run_params, (std::vector<std::string>{"workspace_pools"}));
  ASSERT_EQ(h.pools.size(), 1u);
  EXPECT_EQ(h.pools[0].size, 64);
  EXPECT_FALSE(h.pools[0].constant);
}

TEST(InterfaceHeader, AHeaderWithoutPoolsRunsOnInputsAndOutputs) {
  const InterfaceHeader h = read_interface_header(kPlainRun, "tvmgen_default");
  EXPECT_EQ(h.run_params, (std::vector<std::string>{"inputs", "outputs"}));
  EXPECT_TRUE(h.pools.empty());
}

TEST(InterfaceHeader, AHeaderOfAnotherModuleHasNoRunToCall) {
  EXPECT_THROW(read_interface_header(kPoolsHeader, "tvmgen_my_mod"), HeaderError);
}

TEST(InterfaceHeader, APoolWithoutItsSizeMacroCannotBeAllocated) {
  std::string text = kPoolsHeader;
  const std::string macro = "TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE";
  text.replace(text.find(macro), macro.size(), "TVMGEN_DEFAULT_SOMETHING_ELSE");
  try {
    read_interface_header(text, "tvmgen_default");
    FAIL() << "no error";
  } catch (const HeaderError& e) {
    EXPECT_NE(std::string(e.what()).find("aotfuzz_workspace"), std::string::npos) << e.what();
  }
}

TEST(InterfaceHeader, ARunParameterOfAnUnknownStructIsAnError) {
  std::string text = kPlainRun;
  text.replace(text.find("tvmgen_default_outputs* outputs"), 31, "tvmgen_default_other* other");
  EXPECT_THROW(read_interface_header(text, "tvmgen_default"), HeaderError);
}

TEST(InterfaceHeader, AStructMemberThatIsNoPointerIsAnError) {
  EXPECT_THROW(struct_fields("struct s {\n  int x;\n};\n", "s"), HeaderError);
  EXPECT_TRUE(struct_fields("struct t {\n  void* x;\n};\n", "s").empty());
}

TEST(InterfaceHeader, MacroNamesAreThePrefixAndNameInUpperCase) {
  EXPECT_EQ(constant_style("tvmgen_my_mod", "pool_WORKSPACE_POOL_SIZE"),
            "TVMGEN_MY_MOD_POOL_WORKSPACE_POOL_SIZE");
}

}  // namespace
}  // namespace aotfuzz::tvm
