// Allowed: money may use the error catalogue (this file is the fixture's control).
import { failure } from '../errors.js';

export const sendFailure = failure('mint_unreachable');
