import '@picocss/pico/css/pico.min.css';
import './console.css';
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (!root) throw new Error('index.html has no #app element');
render(<App />, root);
