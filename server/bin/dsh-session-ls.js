#!/usr/bin/env node
'use strict';
// The committed entry of the `dsh-session-ls` bin: it loads the built server (npm ci builds it).
require('../dist/main.js').main();
