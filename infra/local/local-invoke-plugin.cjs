/**
 * `npx serverless invoke local --stage local -f <fn> -p events/<file>.json` offline: for the
 * `local` stage only, this plugin starts the embedded sandbox (infra/local/invoke-sandbox.ts)
 * after serverless has set the function's environment, points the handler at it, and stops it
 * when the invocation ends. Other stages and commands are untouched.
 */
'use strict';
/* global require, module, process, __dirname, __filename */
/* eslint-disable @typescript-eslint/no-require-imports -- serverless loads plugins with require() */

const path = require('node:path');

class LocalInvokeSandbox {
  constructor(serverless, options) {
    this.serverless = serverless;
    this.options = options;
    this.hooks = {
      'before:invoke:local:invoke': () => this.start(),
      'after:invoke:local:invoke': () => this.stop(),
    };
  }

  get stage() {
    return this.options.stage ?? this.serverless.service.provider.stage;
  }

  async start() {
    if (this.stage !== 'local') return;
    const { tsImport } = require('tsx/esm/api');
    const { startInvokeSandbox } = await tsImport(
      path.join(__dirname, 'invoke-sandbox.ts'),
      __filename,
    );
    this.sandbox = await startInvokeSandbox(process.env.TABLE_NAME);
    Object.assign(process.env, this.sandbox.env);
    // The sandbox's servers keep the process alive: stop them however the invocation ends.
    const invoker = this.serverless.pluginManager.plugins.find(
      (p) => p.constructor.name === 'AwsInvokeLocal',
    );
    if (invoker) {
      const invoke = invoker.invokeLocal.bind(invoker);
      invoker.invokeLocal = async () => {
        try {
          return await invoke();
        } finally {
          await this.stop();
        }
      };
    }
  }

  async stop() {
    if (!this.sandbox) return;
    await this.sandbox.close();
    this.sandbox = undefined;
  }
}

module.exports = LocalInvokeSandbox;
