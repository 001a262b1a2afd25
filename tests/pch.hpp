// Precompiled for every test suite: the heavy headers every test includes.
#pragma once
#include <catch2/catch.hpp>
#include <date/date.h>
#include <nlohmann/json.hpp>
