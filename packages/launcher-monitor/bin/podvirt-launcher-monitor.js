#!/usr/bin/env node
// The package's `bin`: the compiled entry point does all the work.
import '../dist/src/main.js';
