#!/usr/bin/env node
// The compiled entry point lives in dist/; this shim keeps the bin path stable across builds.
import '../dist/src/main.js';
