// The part of libdbus-1 the DBus module uses. libdbus's reference documentation:
// https://dbus.freedesktop.org/doc/api/html/ ; the module avoids libdbus's variadic functions
// (dbus_message_append_args, dbus_message_get_args), so none needs a wrapper here.
#ifndef NEARBY_CDBUS_SHIM_H
#define NEARBY_CDBUS_SHIM_H

#include <dbus/dbus.h>

/// The message types, as plain constants (the header's macros are casts Swift cannot import).
static const int cdbus_message_type_method_call = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int cdbus_message_type_method_return = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int cdbus_message_type_error = DBUS_MESSAGE_TYPE_ERROR;
static const int cdbus_message_type_signal = DBUS_MESSAGE_TYPE_SIGNAL;

#endif
