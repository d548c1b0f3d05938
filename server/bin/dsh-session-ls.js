#!/usr/bin/env node
'use strict';
// The committed entry of the `dsh-session-ls` bin: it loads the built, bundled server (npm ci builds it).
require('../dist/bundle/main.js').main();
