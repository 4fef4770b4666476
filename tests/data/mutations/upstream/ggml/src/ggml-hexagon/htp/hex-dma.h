#pragma once
#include "dma-queue.h"
