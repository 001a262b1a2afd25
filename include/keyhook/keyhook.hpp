// keyhook: the whole core in one include. Each header also compiles on its own.
// Not included: keyhook/testing.hpp (builders for tests) and keyhook/crypto/
// (needs OpenSSL, target keyhook::crypto).
#pragma once

#include "keyhook/config.hpp"
#include "keyhook/version.hpp"
#include "keyhook/error.hpp"
#include "keyhook/json_input.hpp"
#include "keyhook/timestamps.hpp"
#include "keyhook/secret.hpp"
#include "keyhook/api_key.hpp"
#include "keyhook/status.hpp"
#include "keyhook/http.hpp"
#include "keyhook/events.hpp"
#include "keyhook/expiry_notices.hpp"
#include "keyhook/notification.hpp"
#include "keyhook/key_list.hpp"
#include "keyhook/receiving.hpp"
#include "keyhook/base64.hpp"
#include "keyhook/retry.hpp"
#include "keyhook/endpoint.hpp"
#include "keyhook/webhook.hpp"
#include "keyhook/permissions.hpp"
#include "keyhook/creation.hpp"
#include "keyhook/lifecycle.hpp"
#include "keyhook/key_index.hpp"
#include "keyhook/authorization.hpp"
#include "keyhook/dispatch.hpp"
