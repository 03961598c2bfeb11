#include "common/proto_text.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "core/utf8.h"

namespace attrib::common {

bool make_text_valid_utf8(google::protobuf::Message& message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = message.GetReflection();
  const google::protobuf::Descriptor* descriptor = message.GetDescriptor();
  bool changed = false;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const bool is_string = field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
                           field->type() == FieldDescriptor::TYPE_STRING;  // not bytes
    const bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (field->is_repeated()) {  // map fields are repeated entry messages
      const int size = reflection->FieldSize(message, field);
      for (int k = 0; k < size; ++k) {
        if (is_string) {
          std::string value = reflection->GetRepeatedString(message, field, k);
          if (make_valid_utf8(value)) {
            reflection->SetRepeatedString(&message, field, k, value);
            changed = true;
          }
        } else if (is_message) {
          changed |= make_text_valid_utf8(*reflection->MutableRepeatedMessage(&message, field, k));
        }
      }
    } else if (is_string) {
      std::string value = reflection->GetString(message, field);
      if (make_valid_utf8(value)) {
        reflection->SetString(&message, field, value);
        changed = true;
      }
    } else if (is_message && reflection->HasField(message, field)) {
      changed |= make_text_valid_utf8(*reflection->MutableMessage(&message, field));
    }
  }
  return changed;
}

}  // namespace attrib::common
