#pragma once

#include <string>
#include <vector>

std::vector<std::string> simple_tokenize(const std::string &);
