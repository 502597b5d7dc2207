// Lint: typescript-eslint's recommended type-aware rules; `any` is an error in src. Layout is
// prettier's (`prettier --check .` in `npm run lint`), so eslint-config-prettier, last, turns off
// the rules that would fight it.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", ".cache/**", "dist/**", "coverage/**", ".services/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        performance: "readonly",
        AbortController: "readonly",
        fetch: "readonly",
        queueMicrotask: "readonly",
        setImmediate: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // The live view's page scripts run in the browser as plain ES modules (served, never built).
    files: ["src/serve/static/**/*.js"],
    languageOptions: {
      globals: {
        window: "readonly",
        document: "readonly",
        Node: "readonly",
        EventSource: "readonly",
        requestAnimationFrame: "readonly",
        uPlot: "readonly",
      },
    },
  },
  prettier,
);
