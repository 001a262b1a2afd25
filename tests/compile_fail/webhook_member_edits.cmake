# The exercise of docs/design.md ("adding a member to webhook") on the real
# headers: edit 1 adds the member to the struct (webhook.hpp), edit 2 its row
# to the table (detail/webhook_table.hpp). Case 0 (the control) makes both
# and must compile; case 1 makes edit 1 only, case 2 edit 2 only, and each
# must not. An anchor that is no longer found fails the test, so that the
# exercise cannot pass by editing nothing.
function(keyhook_edit_copy relative anchor replacement)
    file(READ "${KEYHOOK_INCLUDE}/${relative}" text)
    string(FIND "${text}" "${anchor}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "webhook_member_edits: ${relative} no longer holds the anchor \"${anchor}\"")
    endif()
    string(REPLACE "${anchor}" "${replacement}" text "${text}")
    file(WRITE "${EDITED_INCLUDE}/${relative}" "${text}")
endfunction()

set(_member_anchor "    std::optional<secret> signing_secret;")
set(_row_anchor "(\"signingSecret\", &webhook::signing_secret, presence::optional)")
if(CASE EQUAL 0 OR CASE EQUAL 1)
    keyhook_edit_copy(keyhook/webhook.hpp "${_member_anchor}"
                      "    std::optional<std::string> description;\n${_member_anchor}")
endif()
if(CASE EQUAL 0 OR CASE EQUAL 2)
    keyhook_edit_copy(keyhook/detail/webhook_table.hpp "${_row_anchor}"
                      "${_row_anchor},\n        row<text_form>(\"description\", &webhook::description, presence::optional)")
endif()
