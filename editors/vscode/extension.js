// The gpudbg VS Code extension: starts `gpudbg dap` (stdio) for every
// `gpudbg` debug session and fills in a launch configuration when there is
// no launch.json. Everything else (breakpoints, threads, variables, the
// CUDA views) is the adapter's; this file only tells VS Code where it is.
'use strict';
const vscode = require('vscode');

function adapterPath() {
  return vscode.workspace.getConfiguration('gpudbg').get('path') || 'gpudbg';
}

class AdapterFactory {
  createDebugAdapterDescriptor(session) {
    // a debugServer (port) in the configuration is handled by VS Code itself
    return new vscode.DebugAdapterExecutable(adapterPath(), ['dap'], {
      cwd: session.configuration.cwd || undefined,
    });
  }
}

class ConfigurationProvider {
  resolveDebugConfiguration(folder, config) {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.languageId === 'python') {
        config.type = 'gpudbg';
        config.name = 'gpudbg: debug the kernels of this Python program';
        config.request = 'launch';
        config.program = '${file}';
      }
    }
    if (config.request === 'launch' && !config.program && !config.coreFile) {
      return vscode.window.showInformationMessage(
        'gpudbg: set "program" (a Python host program) or "coreFile" (a GPU coredump) in the launch configuration.',
      ).then(() => undefined);
    }
    return config;
  }
}

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('gpudbg', new AdapterFactory()),
    vscode.debug.registerDebugConfigurationProvider('gpudbg', new ConfigurationProvider()),
    vscode.commands.registerCommand('gpudbg.focus', async () => {
      // cuda-gdb's `cuda block B thread T`, through the adapter's cuda/focus request
      const session = vscode.debug.activeDebugSession;
      if (!session || session.type !== 'gpudbg') return;
      const text = await vscode.window.showInputBox({ prompt: 'CUDA focus: block x,y,z thread x,y,z', value: '0 0' });
      if (!text) return;
      const nums = text.split(/[\s,]+/).filter(Boolean).map(Number);
      if (nums.length !== 2 && nums.length !== 6) {
        vscode.window.showErrorMessage('gpudbg: give "BLOCK THREAD" or "bx by bz tx ty tz".');
        return;
      }
      const args = nums.length === 2 ? { block: [nums[0]], thread: [nums[1]] }
        : { block: nums.slice(0, 3), thread: nums.slice(3) };
      try {
        const r = await session.customRequest('cuda/focus', args);
        vscode.window.showInformationMessage(`gpudbg: focus on block (${r.focus.block}) thread (${r.focus.thread}), thread id ${r.threadId}`);
      } catch (e) {
        vscode.window.showErrorMessage(`gpudbg: ${e.message || e}`);
      }
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate, AdapterFactory, ConfigurationProvider };
