# graphtier_unity_build(TARGET BATCH): compiles TARGET's .cpp sources as unity batches of at most
# BATCH files, as CMake's UNITY_BUILD does, but with each batch's #include lines relative to the
# batch file. CMake's own batches (UNITY_BUILD; UNITY_BUILD_RELOCATABLE needs CMake 3.32) include
# each source by its absolute path, so a compiler cache could never serve a batch compiled in one
# clone to another (scripts/compiler-cache.sh); these batches read the same in every clone whose
# build directory sits at the same place in the tree (the presets': build/<preset>/).
function(graphtier_unity_build target batch)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cpp$")
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}.unity)
  set(batches "")
  set(text "")
  set(count 0)
  list(LENGTH sources remaining)
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH relative ${dir} ${path})
    string(APPEND text "#include \"${relative}\"\n")
    math(EXPR count "${count} + 1")
    math(EXPR remaining "${remaining} - 1")
    if(count EQUAL batch OR remaining EQUAL 0)
      list(LENGTH batches index)
      set(file ${dir}/unity_${index}.cpp)
      # Written only when its text changes, so a reconfigure recompiles nothing.
      file(CONFIGURE OUTPUT ${file} CONTENT "${text}" @ONLY)
      list(APPEND batches ${file})
      set(text "")
      set(count 0)
    endif()
  endforeach()
  set_source_files_properties(${sources} PROPERTIES HEADER_FILE_ONLY ON)
  target_sources(${target} PRIVATE ${batches})
endfunction()
