// Tests of the transcription of TVM's C interface naming (reference/c_interface.h), on the names
// of TVM's own tests.
#include "reference/c_interface.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "reference/tvm_passes.h"

namespace aotfuzz::reference {
namespace {

std::string refusal_of(const std::string& params) {
  const ir::Module m = ir::parse_module("def @main(" + params + ") { %x }");
  try {
    c_interface_input_names(m.main());
  } catch (const TvmRefuses& e) {
    return e.what();
  }
  return "";
}

TEST(CInterface, EveryCharacterOutsideWordCharactersBecomesAnUnderscore) {
  // TVM's test_name_sanitiser, and tuple parameters numbered field by field.
  const ir::Module m = ir::parse_module(
      "def @main(%\"input-x::2\": float32, %x: (float32, (float32, float32))) { %x }");
  EXPECT_EQ(c_interface_input_names(m.main()),
            (std::vector<std::string>{"input_x__2", "x_0", "x_1", "x_2"}));
}

TEST(CInterface, TwoNamesThatSanitizeAlikeAreTvmsNameClash) {
  // TVM's test_name_sanitiser_name_clash: "input::-2" and "input:--2" are both input___2.
  EXPECT_EQ(refusal_of("%x: float32, %\"input::-2\": float32, %\"input:--2\": float32"),
            "Sanitized input tensor name clash: input___2");
  EXPECT_EQ(refusal_of("%x: float32, %\"input::-2\": float32, %\"input:-:3\": float32"), "");
  // A tuple's numbered field against a tensor of that name.
  EXPECT_NE(refusal_of("%x: (float32, float32), %x_1: float32").find("name clash: x_1"),
            std::string::npos);
}

TEST(CInterface, AFieldThatIsNoCIdentifierIsRefused) {
  EXPECT_NE(refusal_of("%x: float32, %\"0x\": float32").find("not a C identifier"),
            std::string::npos);
  EXPECT_NE(refusal_of("%x: float32, %\"int\": float32").find("not a C identifier"),
            std::string::npos);
}

}  // namespace
}  // namespace aotfuzz::reference
