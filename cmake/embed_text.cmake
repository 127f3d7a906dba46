# aotfuzz_embed_text(<folder> <file> <name>): the text of <folder>/<file> as
# `inline constexpr std::string_view aotfuzz::<folder>::<name>`, in the header
# "<folder>/<file, dots as underscores>.h" that only the library aotfuzz_<folder> sees.
#
# Text that aotfuzz writes out or runs (the C of its harnesses and runtime header, the TVM driver
# in Python) stays a file of its own language, which compilers, editors and linters read as such,
# and is still part of the executable: nothing to install or look up at run time.
#
# A block of `//` lines at the top of the file, with the blank line after it, is its note to
# maintainers and is left out; the rest is embedded byte for byte. Editing the file reruns CMake,
# which rewrites the header only when the text changed.
function(aotfuzz_embed_text folder file name)
  set(source ${PROJECT_SOURCE_DIR}/${folder}/${file})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
  file(READ ${source} embed_text)
  string(REGEX MATCH "^(//[^\n]*\n)+\n?" note "${embed_text}")
  string(LENGTH "${note}" note_length)
  string(SUBSTRING "${embed_text}" ${note_length} -1 embed_text)
  # The raw string literal ends at the first `)<delimiter>"`.
  set(embed_delimiter aotfuzz_embed)
  string(FIND "${embed_text}" ")${embed_delimiter}\"" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${source} contains `)${embed_delimiter}\"`, which would end the raw "
                        "string literal that embeds it: change embed_delimiter in "
                        "${CMAKE_CURRENT_FUNCTION_LIST_FILE}")
  endif()
  set(embed_source ${folder}/${file})
  set(embed_namespace aotfuzz::${folder})
  set(embed_name ${name})
  string(REPLACE "." "_" header ${file})
  set(generated ${PROJECT_BINARY_DIR}/${folder}/generated)
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_text.h.in
                 ${generated}/${folder}/${header}.h @ONLY)
  target_include_directories(aotfuzz_${folder} PRIVATE ${generated})
endfunction()
