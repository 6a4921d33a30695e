#pragma once
typedef unsigned int uint;
#define SHARED_SIZE_LIMIT 1024U
