# crank_runtime_items: what the runtime does to upstream items and responses, apart from running
# operations: the safety stage (redaction, truncation, dedup, sampling), the output mapping and
# the secret scrubber, and the bounded buffer of a session.
# Included from host/runtime/CMakeLists.txt.
add_library(crank_runtime_items STATIC
    ${CMAKE_CURRENT_LIST_DIR}/output_mapping.cpp
    ${CMAKE_CURRENT_LIST_DIR}/safety_stage.cpp
    ${CMAKE_CURRENT_LIST_DIR}/secret_scrubber.cpp
    ${CMAKE_CURRENT_LIST_DIR}/secret_wire_forms.cpp
    ${CMAKE_CURRENT_LIST_DIR}/session_buffer.cpp)
target_link_libraries(crank_runtime_items
    PUBLIC crank_json crank_config crank_util crank_compiler_options
    PRIVATE crank_rapidjson fmt::fmt)
