// Precompiled for every test suite: the heavy headers every test includes.
#pragma once
#include <catch2/catch.hpp>
#include <date/date.h>
#include <nlohmann/json.hpp>
// Every test source prints timestamps alike (a StringMaker that only some saw would break the ODR).
#include "keyhook/testing/catch2.hpp"
