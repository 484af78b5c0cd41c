// generated — do not edit; run npm run gen (scripts/gen-openapi-types.ts from openapi/openapi.yaml):
// every documented operation's request-body validator, ajv standalone code (core/openapi/validators.ts)
"use strict";
exports["POST /v1/chat/completions"] = validate10;
const schema11 = {"$ref":"openapi-components#/definitions/ChatCompletionRequest"};
const schema13 = {"description":"OpenAI chat completion request. Unknown extra fields are allowed and relayed (providers add their\nown). `model` is required: there is no automatic routing.\n","type":"object","additionalProperties":true,"required":["model","messages"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256,"description":"A model id from GET /v1/models."},"messages":{"type":"array","minItems":1,"items":{"$ref":"openapi-components#/definitions/ChatMessage"}},"temperature":{"type":["number","null"],"minimum":0,"maximum":2,"default":1},"max_tokens":{"type":["integer","null"],"maximum":100000000,"minimum":1,"description":"Upper bound of completion tokens (model default when absent). It bounds the reservation; when the\nbalance cannot afford it, the gateway lowers it to what the balance affords.\n"},"max_completion_tokens":{"type":["integer","null"],"maximum":100000000,"minimum":1,"description":"The newer OpenAI name of `max_tokens`; treated the same way."},"stream":{"type":["boolean","null"],"default":false},"stream_options":{"type":["object","null"],"additionalProperties":true,"properties":{"include_usage":{"type":"boolean","description":"The gateway sets it upstream to meter streams; the client gets the usage chunk too."}}},"top_p":{"type":["number","null"],"minimum":0,"maximum":1,"default":1},"top_k":{"type":["integer","null"],"maximum":1000000,"minimum":0,"description":"Only some models."},"n":{"type":["integer","null"],"minimum":1,"maximum":128,"default":1},"stop":{"anyOf":[{"anyOf":[{"type":"string"},{"type":"array","maxItems":4,"items":{"type":"string"}}]},{"type":"null"}]},"presence_penalty":{"type":["number","null"],"minimum":-2,"maximum":2,"default":0},"frequency_penalty":{"type":["number","null"],"minimum":-2,"maximum":2,"default":0},"seed":{"type":["integer","null"],"minimum":-9007199254740991,"maximum":9007199254740991},"user":{"type":"string"},"tools":{"type":"array","items":{"type":"object","additionalProperties":true,"required":["type"],"properties":{"type":{"type":"string"}}}},"tool_choice":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":true}]},"response_format":{"type":"object","additionalProperties":true,"required":["type"],"properties":{"type":{"type":"string"}}}}};
const func2 = require("ajv/dist/runtime/ucs2length").default;
const schema14 = {"type":"object","additionalProperties":true,"required":["role"],"properties":{"role":{"type":"string","enum":["system","developer","user","assistant","tool","function"]},"content":{"anyOf":[{"description":"Text, or an array of parts. May be null on assistant messages with tool calls.","anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"openapi-components#/definitions/ContentPart"}}]},{"type":"null"}]},"name":{"type":"string"},"tool_calls":{"type":"array","items":{"type":"object","additionalProperties":true}},"tool_call_id":{"type":"string"}}};
const schema15 = {"description":"`{type: text, text}`, `{type: image_url, image_url: {url}}`, or another part type the model supports.","type":"object","additionalProperties":true,"required":["type"],"properties":{"type":{"type":"string","minLength":1},"text":{"type":"string"},"image_url":{"type":"object","additionalProperties":true,"required":["url"],"properties":{"url":{"type":"string"},"detail":{"type":"string","enum":["auto","low","high"]}}}}};

function validate13(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.role === undefined) && (missing0 = "role")){
validate13.errors = [{instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.role !== undefined){
let data0 = data.role;
const _errs2 = errors;
if(typeof data0 !== "string"){
validate13.errors = [{instancePath:instancePath+"/role",schemaPath:"#/properties/role/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((((((data0 === "system") || (data0 === "developer")) || (data0 === "user")) || (data0 === "assistant")) || (data0 === "tool")) || (data0 === "function"))){
validate13.errors = [{instancePath:instancePath+"/role",schemaPath:"#/properties/role/enum",keyword:"enum",params:{allowedValues: schema14.properties.role.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.content !== undefined){
let data1 = data.content;
const _errs4 = errors;
const _errs5 = errors;
let valid1 = false;
const _errs6 = errors;
const _errs7 = errors;
let valid2 = false;
const _errs8 = errors;
if(typeof data1 !== "string"){
const err0 = {instancePath:instancePath+"/content",schemaPath:"#/properties/content/anyOf/0/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid1 = _errs8 === errors;
valid2 = valid2 || _valid1;
if(!valid2){
const _errs10 = errors;
if(errors === _errs10){
if(Array.isArray(data1)){
var valid3 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
let data2 = data1[i0];
const _errs12 = errors;
const _errs13 = errors;
if(errors === _errs13){
if(data2 && typeof data2 == "object" && !Array.isArray(data2)){
let missing1;
if((data2.type === undefined) && (missing1 = "type")){
const err1 = {instancePath:instancePath+"/content/" + i0,schemaPath:"openapi-components#/definitions/ContentPart/required",keyword:"required",params:{missingProperty: missing1},message:"must have required property '"+missing1+"'"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
else {
if(data2.type !== undefined){
let data3 = data2.type;
const _errs16 = errors;
if(errors === _errs16){
if(typeof data3 === "string"){
if(func2(data3) < 1){
const err2 = {instancePath:instancePath+"/content/" + i0+"/type",schemaPath:"openapi-components#/definitions/ContentPart/properties/type/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
else {
const err3 = {instancePath:instancePath+"/content/" + i0+"/type",schemaPath:"openapi-components#/definitions/ContentPart/properties/type/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
var valid5 = _errs16 === errors;
}
else {
var valid5 = true;
}
if(valid5){
if(data2.text !== undefined){
const _errs18 = errors;
if(typeof data2.text !== "string"){
const err4 = {instancePath:instancePath+"/content/" + i0+"/text",schemaPath:"openapi-components#/definitions/ContentPart/properties/text/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
var valid5 = _errs18 === errors;
}
else {
var valid5 = true;
}
if(valid5){
if(data2.image_url !== undefined){
let data5 = data2.image_url;
const _errs20 = errors;
if(errors === _errs20){
if(data5 && typeof data5 == "object" && !Array.isArray(data5)){
let missing2;
if((data5.url === undefined) && (missing2 = "url")){
const err5 = {instancePath:instancePath+"/content/" + i0+"/image_url",schemaPath:"openapi-components#/definitions/ContentPart/properties/image_url/required",keyword:"required",params:{missingProperty: missing2},message:"must have required property '"+missing2+"'"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
else {
if(data5.url !== undefined){
const _errs23 = errors;
if(typeof data5.url !== "string"){
const err6 = {instancePath:instancePath+"/content/" + i0+"/image_url/url",schemaPath:"openapi-components#/definitions/ContentPart/properties/image_url/properties/url/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
var valid6 = _errs23 === errors;
}
else {
var valid6 = true;
}
if(valid6){
if(data5.detail !== undefined){
let data7 = data5.detail;
const _errs25 = errors;
if(typeof data7 !== "string"){
const err7 = {instancePath:instancePath+"/content/" + i0+"/image_url/detail",schemaPath:"openapi-components#/definitions/ContentPart/properties/image_url/properties/detail/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
if(!(((data7 === "auto") || (data7 === "low")) || (data7 === "high"))){
const err8 = {instancePath:instancePath+"/content/" + i0+"/image_url/detail",schemaPath:"openapi-components#/definitions/ContentPart/properties/image_url/properties/detail/enum",keyword:"enum",params:{allowedValues: schema15.properties.image_url.properties.detail.enum},message:"must be equal to one of the allowed values"};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
var valid6 = _errs25 === errors;
}
else {
var valid6 = true;
}
}
}
}
else {
const err9 = {instancePath:instancePath+"/content/" + i0+"/image_url",schemaPath:"openapi-components#/definitions/ContentPart/properties/image_url/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
var valid5 = _errs20 === errors;
}
else {
var valid5 = true;
}
}
}
}
}
else {
const err10 = {instancePath:instancePath+"/content/" + i0,schemaPath:"openapi-components#/definitions/ContentPart/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
var valid3 = _errs12 === errors;
if(!valid3){
break;
}
}
}
else {
const err11 = {instancePath:instancePath+"/content",schemaPath:"#/properties/content/anyOf/0/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
var _valid1 = _errs10 === errors;
valid2 = valid2 || _valid1;
}
if(!valid2){
const err12 = {instancePath:instancePath+"/content",schemaPath:"#/properties/content/anyOf/0/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
else {
errors = _errs7;
if(vErrors !== null){
if(_errs7){
vErrors.length = _errs7;
}
else {
vErrors = null;
}
}
}
var _valid0 = _errs6 === errors;
valid1 = valid1 || _valid0;
if(!valid1){
const _errs27 = errors;
if(data1 !== null){
const err13 = {instancePath:instancePath+"/content",schemaPath:"#/properties/content/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
var _valid0 = _errs27 === errors;
valid1 = valid1 || _valid0;
}
if(!valid1){
const err14 = {instancePath:instancePath+"/content",schemaPath:"#/properties/content/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
validate13.errors = vErrors;
return false;
}
else {
errors = _errs5;
if(vErrors !== null){
if(_errs5){
vErrors.length = _errs5;
}
else {
vErrors = null;
}
}
}
var valid0 = _errs4 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.name !== undefined){
const _errs29 = errors;
if(typeof data.name !== "string"){
validate13.errors = [{instancePath:instancePath+"/name",schemaPath:"#/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid0 = _errs29 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.tool_calls !== undefined){
let data9 = data.tool_calls;
const _errs31 = errors;
if(errors === _errs31){
if(Array.isArray(data9)){
var valid7 = true;
const len1 = data9.length;
for(let i1=0; i1<len1; i1++){
let data10 = data9[i1];
const _errs33 = errors;
if(errors === _errs33){
if(data10 && typeof data10 == "object" && !Array.isArray(data10)){
}
else {
validate13.errors = [{instancePath:instancePath+"/tool_calls/" + i1,schemaPath:"#/properties/tool_calls/items/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
var valid7 = _errs33 === errors;
if(!valid7){
break;
}
}
}
else {
validate13.errors = [{instancePath:instancePath+"/tool_calls",schemaPath:"#/properties/tool_calls/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid0 = _errs31 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.tool_call_id !== undefined){
const _errs36 = errors;
if(typeof data.tool_call_id !== "string"){
validate13.errors = [{instancePath:instancePath+"/tool_call_id",schemaPath:"#/properties/tool_call_id/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid0 = _errs36 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
}
}
else {
validate13.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate13.errors = vErrors;
return errors === 0;
}


function validate12(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.messages === undefined) && (missing0 = "messages"))){
validate12.errors = [{instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs2 = errors;
if(errors === _errs2){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate12.errors = [{instancePath:instancePath+"/model",schemaPath:"#/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate12.errors = [{instancePath:instancePath+"/model",schemaPath:"#/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate12.errors = [{instancePath:instancePath+"/model",schemaPath:"#/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.messages !== undefined){
let data1 = data.messages;
const _errs4 = errors;
if(errors === _errs4){
if(Array.isArray(data1)){
if(data1.length < 1){
validate12.errors = [{instancePath:instancePath+"/messages",schemaPath:"#/properties/messages/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"}];
return false;
}
else {
var valid1 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
const _errs6 = errors;
if(!(validate13(data1[i0], {instancePath:instancePath+"/messages/" + i0,parentData:data1,parentDataProperty:i0,rootData}))){
vErrors = vErrors === null ? validate13.errors : vErrors.concat(validate13.errors);
errors = vErrors.length;
}
var valid1 = _errs6 === errors;
if(!valid1){
break;
}
}
}
}
else {
validate12.errors = [{instancePath:instancePath+"/messages",schemaPath:"#/properties/messages/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid0 = _errs4 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.temperature !== undefined){
let data3 = data.temperature;
const _errs7 = errors;
if((!((typeof data3 == "number") && (isFinite(data3)))) && (data3 !== null)){
validate12.errors = [{instancePath:instancePath+"/temperature",schemaPath:"#/properties/temperature/type",keyword:"type",params:{type: schema13.properties.temperature.type},message:"must be number,null"}];
return false;
}
if(errors === _errs7){
if((typeof data3 == "number") && (isFinite(data3))){
if(data3 > 2 || isNaN(data3)){
validate12.errors = [{instancePath:instancePath+"/temperature",schemaPath:"#/properties/temperature/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data3 < 0 || isNaN(data3)){
validate12.errors = [{instancePath:instancePath+"/temperature",schemaPath:"#/properties/temperature/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid0 = _errs7 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.max_tokens !== undefined){
let data4 = data.max_tokens;
const _errs9 = errors;
if((!(((typeof data4 == "number") && (!(data4 % 1) && !isNaN(data4))) && (isFinite(data4)))) && (data4 !== null)){
validate12.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"#/properties/max_tokens/type",keyword:"type",params:{type: schema13.properties.max_tokens.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs9){
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 100000000 || isNaN(data4)){
validate12.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"#/properties/max_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data4 < 1 || isNaN(data4)){
validate12.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"#/properties/max_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid0 = _errs9 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.max_completion_tokens !== undefined){
let data5 = data.max_completion_tokens;
const _errs11 = errors;
if((!(((typeof data5 == "number") && (!(data5 % 1) && !isNaN(data5))) && (isFinite(data5)))) && (data5 !== null)){
validate12.errors = [{instancePath:instancePath+"/max_completion_tokens",schemaPath:"#/properties/max_completion_tokens/type",keyword:"type",params:{type: schema13.properties.max_completion_tokens.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs11){
if((typeof data5 == "number") && (isFinite(data5))){
if(data5 > 100000000 || isNaN(data5)){
validate12.errors = [{instancePath:instancePath+"/max_completion_tokens",schemaPath:"#/properties/max_completion_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data5 < 1 || isNaN(data5)){
validate12.errors = [{instancePath:instancePath+"/max_completion_tokens",schemaPath:"#/properties/max_completion_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid0 = _errs11 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.stream !== undefined){
let data6 = data.stream;
const _errs13 = errors;
if((typeof data6 !== "boolean") && (data6 !== null)){
validate12.errors = [{instancePath:instancePath+"/stream",schemaPath:"#/properties/stream/type",keyword:"type",params:{type: schema13.properties.stream.type},message:"must be boolean,null"}];
return false;
}
var valid0 = _errs13 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.stream_options !== undefined){
let data7 = data.stream_options;
const _errs15 = errors;
if((!(data7 && typeof data7 == "object" && !Array.isArray(data7))) && (data7 !== null)){
validate12.errors = [{instancePath:instancePath+"/stream_options",schemaPath:"#/properties/stream_options/type",keyword:"type",params:{type: schema13.properties.stream_options.type},message:"must be object,null"}];
return false;
}
if(errors === _errs15){
if(data7 && typeof data7 == "object" && !Array.isArray(data7)){
if(data7.include_usage !== undefined){
if(typeof data7.include_usage !== "boolean"){
validate12.errors = [{instancePath:instancePath+"/stream_options/include_usage",schemaPath:"#/properties/stream_options/properties/include_usage/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
}
}
}
var valid0 = _errs15 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.top_p !== undefined){
let data9 = data.top_p;
const _errs20 = errors;
if((!((typeof data9 == "number") && (isFinite(data9)))) && (data9 !== null)){
validate12.errors = [{instancePath:instancePath+"/top_p",schemaPath:"#/properties/top_p/type",keyword:"type",params:{type: schema13.properties.top_p.type},message:"must be number,null"}];
return false;
}
if(errors === _errs20){
if((typeof data9 == "number") && (isFinite(data9))){
if(data9 > 1 || isNaN(data9)){
validate12.errors = [{instancePath:instancePath+"/top_p",schemaPath:"#/properties/top_p/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1},message:"must be <= 1"}];
return false;
}
else {
if(data9 < 0 || isNaN(data9)){
validate12.errors = [{instancePath:instancePath+"/top_p",schemaPath:"#/properties/top_p/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid0 = _errs20 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.top_k !== undefined){
let data10 = data.top_k;
const _errs22 = errors;
if((!(((typeof data10 == "number") && (!(data10 % 1) && !isNaN(data10))) && (isFinite(data10)))) && (data10 !== null)){
validate12.errors = [{instancePath:instancePath+"/top_k",schemaPath:"#/properties/top_k/type",keyword:"type",params:{type: schema13.properties.top_k.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs22){
if((typeof data10 == "number") && (isFinite(data10))){
if(data10 > 1000000 || isNaN(data10)){
validate12.errors = [{instancePath:instancePath+"/top_k",schemaPath:"#/properties/top_k/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000},message:"must be <= 1000000"}];
return false;
}
else {
if(data10 < 0 || isNaN(data10)){
validate12.errors = [{instancePath:instancePath+"/top_k",schemaPath:"#/properties/top_k/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid0 = _errs22 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.n !== undefined){
let data11 = data.n;
const _errs24 = errors;
if((!(((typeof data11 == "number") && (!(data11 % 1) && !isNaN(data11))) && (isFinite(data11)))) && (data11 !== null)){
validate12.errors = [{instancePath:instancePath+"/n",schemaPath:"#/properties/n/type",keyword:"type",params:{type: schema13.properties.n.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs24){
if((typeof data11 == "number") && (isFinite(data11))){
if(data11 > 128 || isNaN(data11)){
validate12.errors = [{instancePath:instancePath+"/n",schemaPath:"#/properties/n/maximum",keyword:"maximum",params:{comparison: "<=", limit: 128},message:"must be <= 128"}];
return false;
}
else {
if(data11 < 1 || isNaN(data11)){
validate12.errors = [{instancePath:instancePath+"/n",schemaPath:"#/properties/n/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid0 = _errs24 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.stop !== undefined){
let data12 = data.stop;
const _errs26 = errors;
const _errs27 = errors;
let valid3 = false;
const _errs28 = errors;
const _errs29 = errors;
let valid4 = false;
const _errs30 = errors;
if(typeof data12 !== "string"){
const err0 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf/0/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid1 = _errs30 === errors;
valid4 = valid4 || _valid1;
if(!valid4){
const _errs32 = errors;
if(errors === _errs32){
if(Array.isArray(data12)){
if(data12.length > 4){
const err1 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf/0/anyOf/1/maxItems",keyword:"maxItems",params:{limit: 4},message:"must NOT have more than 4 items"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
else {
var valid5 = true;
const len1 = data12.length;
for(let i1=0; i1<len1; i1++){
const _errs34 = errors;
if(typeof data12[i1] !== "string"){
const err2 = {instancePath:instancePath+"/stop/" + i1,schemaPath:"#/properties/stop/anyOf/0/anyOf/1/items/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
var valid5 = _errs34 === errors;
if(!valid5){
break;
}
}
}
}
else {
const err3 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf/0/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
var _valid1 = _errs32 === errors;
valid4 = valid4 || _valid1;
}
if(!valid4){
const err4 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf/0/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
else {
errors = _errs29;
if(vErrors !== null){
if(_errs29){
vErrors.length = _errs29;
}
else {
vErrors = null;
}
}
}
var _valid0 = _errs28 === errors;
valid3 = valid3 || _valid0;
if(!valid3){
const _errs36 = errors;
if(data12 !== null){
const err5 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var _valid0 = _errs36 === errors;
valid3 = valid3 || _valid0;
}
if(!valid3){
const err6 = {instancePath:instancePath+"/stop",schemaPath:"#/properties/stop/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
validate12.errors = vErrors;
return false;
}
else {
errors = _errs27;
if(vErrors !== null){
if(_errs27){
vErrors.length = _errs27;
}
else {
vErrors = null;
}
}
}
var valid0 = _errs26 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.presence_penalty !== undefined){
let data14 = data.presence_penalty;
const _errs38 = errors;
if((!((typeof data14 == "number") && (isFinite(data14)))) && (data14 !== null)){
validate12.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"#/properties/presence_penalty/type",keyword:"type",params:{type: schema13.properties.presence_penalty.type},message:"must be number,null"}];
return false;
}
if(errors === _errs38){
if((typeof data14 == "number") && (isFinite(data14))){
if(data14 > 2 || isNaN(data14)){
validate12.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"#/properties/presence_penalty/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data14 < -2 || isNaN(data14)){
validate12.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"#/properties/presence_penalty/minimum",keyword:"minimum",params:{comparison: ">=", limit: -2},message:"must be >= -2"}];
return false;
}
}
}
}
var valid0 = _errs38 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.frequency_penalty !== undefined){
let data15 = data.frequency_penalty;
const _errs40 = errors;
if((!((typeof data15 == "number") && (isFinite(data15)))) && (data15 !== null)){
validate12.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"#/properties/frequency_penalty/type",keyword:"type",params:{type: schema13.properties.frequency_penalty.type},message:"must be number,null"}];
return false;
}
if(errors === _errs40){
if((typeof data15 == "number") && (isFinite(data15))){
if(data15 > 2 || isNaN(data15)){
validate12.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"#/properties/frequency_penalty/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data15 < -2 || isNaN(data15)){
validate12.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"#/properties/frequency_penalty/minimum",keyword:"minimum",params:{comparison: ">=", limit: -2},message:"must be >= -2"}];
return false;
}
}
}
}
var valid0 = _errs40 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.seed !== undefined){
let data16 = data.seed;
const _errs42 = errors;
if((!(((typeof data16 == "number") && (!(data16 % 1) && !isNaN(data16))) && (isFinite(data16)))) && (data16 !== null)){
validate12.errors = [{instancePath:instancePath+"/seed",schemaPath:"#/properties/seed/type",keyword:"type",params:{type: schema13.properties.seed.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs42){
if((typeof data16 == "number") && (isFinite(data16))){
if(data16 > 9007199254740991 || isNaN(data16)){
validate12.errors = [{instancePath:instancePath+"/seed",schemaPath:"#/properties/seed/maximum",keyword:"maximum",params:{comparison: "<=", limit: 9007199254740991},message:"must be <= 9007199254740991"}];
return false;
}
else {
if(data16 < -9007199254740991 || isNaN(data16)){
validate12.errors = [{instancePath:instancePath+"/seed",schemaPath:"#/properties/seed/minimum",keyword:"minimum",params:{comparison: ">=", limit: -9007199254740991},message:"must be >= -9007199254740991"}];
return false;
}
}
}
}
var valid0 = _errs42 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.user !== undefined){
const _errs44 = errors;
if(typeof data.user !== "string"){
validate12.errors = [{instancePath:instancePath+"/user",schemaPath:"#/properties/user/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid0 = _errs44 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.tools !== undefined){
let data18 = data.tools;
const _errs46 = errors;
if(errors === _errs46){
if(Array.isArray(data18)){
var valid6 = true;
const len2 = data18.length;
for(let i2=0; i2<len2; i2++){
let data19 = data18[i2];
const _errs48 = errors;
if(errors === _errs48){
if(data19 && typeof data19 == "object" && !Array.isArray(data19)){
let missing1;
if((data19.type === undefined) && (missing1 = "type")){
validate12.errors = [{instancePath:instancePath+"/tools/" + i2,schemaPath:"#/properties/tools/items/required",keyword:"required",params:{missingProperty: missing1},message:"must have required property '"+missing1+"'"}];
return false;
}
else {
if(data19.type !== undefined){
if(typeof data19.type !== "string"){
validate12.errors = [{instancePath:instancePath+"/tools/" + i2+"/type",schemaPath:"#/properties/tools/items/properties/type/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
else {
validate12.errors = [{instancePath:instancePath+"/tools/" + i2,schemaPath:"#/properties/tools/items/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
var valid6 = _errs48 === errors;
if(!valid6){
break;
}
}
}
else {
validate12.errors = [{instancePath:instancePath+"/tools",schemaPath:"#/properties/tools/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid0 = _errs46 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.tool_choice !== undefined){
let data21 = data.tool_choice;
const _errs53 = errors;
const _errs54 = errors;
let valid8 = false;
const _errs55 = errors;
if(typeof data21 !== "string"){
const err7 = {instancePath:instancePath+"/tool_choice",schemaPath:"#/properties/tool_choice/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
var _valid2 = _errs55 === errors;
valid8 = valid8 || _valid2;
if(!valid8){
const _errs57 = errors;
if(errors === _errs57){
if(data21 && typeof data21 == "object" && !Array.isArray(data21)){
}
else {
const err8 = {instancePath:instancePath+"/tool_choice",schemaPath:"#/properties/tool_choice/anyOf/1/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
var _valid2 = _errs57 === errors;
valid8 = valid8 || _valid2;
}
if(!valid8){
const err9 = {instancePath:instancePath+"/tool_choice",schemaPath:"#/properties/tool_choice/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
validate12.errors = vErrors;
return false;
}
else {
errors = _errs54;
if(vErrors !== null){
if(_errs54){
vErrors.length = _errs54;
}
else {
vErrors = null;
}
}
}
var valid0 = _errs53 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.response_format !== undefined){
let data22 = data.response_format;
const _errs60 = errors;
if(errors === _errs60){
if(data22 && typeof data22 == "object" && !Array.isArray(data22)){
let missing2;
if((data22.type === undefined) && (missing2 = "type")){
validate12.errors = [{instancePath:instancePath+"/response_format",schemaPath:"#/properties/response_format/required",keyword:"required",params:{missingProperty: missing2},message:"must have required property '"+missing2+"'"}];
return false;
}
else {
if(data22.type !== undefined){
if(typeof data22.type !== "string"){
validate12.errors = [{instancePath:instancePath+"/response_format/type",schemaPath:"#/properties/response_format/properties/type/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
else {
validate12.errors = [{instancePath:instancePath+"/response_format",schemaPath:"#/properties/response_format/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
var valid0 = _errs60 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
else {
validate12.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate12.errors = vErrors;
return errors === 0;
}


function validate10(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate12(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate12.errors : vErrors.concat(validate12.errors);
errors = vErrors.length;
}
validate10.errors = vErrors;
return errors === 0;
}

exports["POST /v1/completions"] = validate16;
const schema16 = {"$ref":"openapi-components#/definitions/CompletionRequest"};
const schema17 = {"description":"OpenAI (legacy) completion request; unknown extra fields are relayed.","type":"object","additionalProperties":true,"required":["model","prompt"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"prompt":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}},{"type":"array","items":{"type":"integer"}},{"type":"array","items":{"type":"array","items":{"type":"integer"}}}]},"max_tokens":{"type":["integer","null"],"maximum":100000000,"minimum":0},"temperature":{"type":["number","null"],"minimum":0,"maximum":2},"top_p":{"type":["number","null"],"minimum":0,"maximum":1},"n":{"type":["integer","null"],"minimum":1,"maximum":128},"stream":{"type":["boolean","null"]},"stop":{"anyOf":[{"anyOf":[{"type":"string"},{"type":"array","maxItems":4,"items":{"type":"string"}}]},{"type":"null"}]},"presence_penalty":{"type":["number","null"],"minimum":-2,"maximum":2},"frequency_penalty":{"type":["number","null"],"minimum":-2,"maximum":2},"logprobs":{"type":["integer","null"],"minimum":0,"maximum":5},"echo":{"type":["boolean","null"]},"suffix":{"type":["string","null"]}}};

function validate16(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.prompt === undefined) && (missing0 = "prompt"))){
validate16.errors = [{instancePath,schemaPath:"openapi-components#/definitions/CompletionRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate16.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate16.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate16.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.prompt !== undefined){
let data1 = data.prompt;
const _errs5 = errors;
const _errs6 = errors;
let valid2 = false;
const _errs7 = errors;
if(typeof data1 !== "string"){
const err0 = {instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid0 = _errs7 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs9 = errors;
if(errors === _errs9){
if(Array.isArray(data1)){
var valid3 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
const _errs11 = errors;
if(typeof data1[i0] !== "string"){
const err1 = {instancePath:instancePath+"/prompt/" + i0,schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/1/items/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
var valid3 = _errs11 === errors;
if(!valid3){
break;
}
}
}
else {
const err2 = {instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
var _valid0 = _errs9 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs13 = errors;
if(errors === _errs13){
if(Array.isArray(data1)){
var valid4 = true;
const len1 = data1.length;
for(let i1=0; i1<len1; i1++){
let data3 = data1[i1];
const _errs15 = errors;
if(!(((typeof data3 == "number") && (!(data3 % 1) && !isNaN(data3))) && (isFinite(data3)))){
const err3 = {instancePath:instancePath+"/prompt/" + i1,schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/2/items/type",keyword:"type",params:{type: "integer"},message:"must be integer"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
var valid4 = _errs15 === errors;
if(!valid4){
break;
}
}
}
else {
const err4 = {instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/2/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
var _valid0 = _errs13 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs17 = errors;
if(errors === _errs17){
if(Array.isArray(data1)){
var valid5 = true;
const len2 = data1.length;
for(let i2=0; i2<len2; i2++){
let data4 = data1[i2];
const _errs19 = errors;
if(errors === _errs19){
if(Array.isArray(data4)){
var valid6 = true;
const len3 = data4.length;
for(let i3=0; i3<len3; i3++){
let data5 = data4[i3];
const _errs21 = errors;
if(!(((typeof data5 == "number") && (!(data5 % 1) && !isNaN(data5))) && (isFinite(data5)))){
const err5 = {instancePath:instancePath+"/prompt/" + i2+"/" + i3,schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/3/items/items/type",keyword:"type",params:{type: "integer"},message:"must be integer"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var valid6 = _errs21 === errors;
if(!valid6){
break;
}
}
}
else {
const err6 = {instancePath:instancePath+"/prompt/" + i2,schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/3/items/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
var valid5 = _errs19 === errors;
if(!valid5){
break;
}
}
}
else {
const err7 = {instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf/3/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
var _valid0 = _errs17 === errors;
valid2 = valid2 || _valid0;
}
}
}
if(!valid2){
const err8 = {instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/prompt/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
validate16.errors = vErrors;
return false;
}
else {
errors = _errs6;
if(vErrors !== null){
if(_errs6){
vErrors.length = _errs6;
}
else {
vErrors = null;
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.max_tokens !== undefined){
let data6 = data.max_tokens;
const _errs23 = errors;
if((!(((typeof data6 == "number") && (!(data6 % 1) && !isNaN(data6))) && (isFinite(data6)))) && (data6 !== null)){
validate16.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/max_tokens/type",keyword:"type",params:{type: schema17.properties.max_tokens.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs23){
if((typeof data6 == "number") && (isFinite(data6))){
if(data6 > 100000000 || isNaN(data6)){
validate16.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/max_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data6 < 0 || isNaN(data6)){
validate16.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/max_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs23 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.temperature !== undefined){
let data7 = data.temperature;
const _errs25 = errors;
if((!((typeof data7 == "number") && (isFinite(data7)))) && (data7 !== null)){
validate16.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/temperature/type",keyword:"type",params:{type: schema17.properties.temperature.type},message:"must be number,null"}];
return false;
}
if(errors === _errs25){
if((typeof data7 == "number") && (isFinite(data7))){
if(data7 > 2 || isNaN(data7)){
validate16.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/temperature/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data7 < 0 || isNaN(data7)){
validate16.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/temperature/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs25 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.top_p !== undefined){
let data8 = data.top_p;
const _errs27 = errors;
if((!((typeof data8 == "number") && (isFinite(data8)))) && (data8 !== null)){
validate16.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/top_p/type",keyword:"type",params:{type: schema17.properties.top_p.type},message:"must be number,null"}];
return false;
}
if(errors === _errs27){
if((typeof data8 == "number") && (isFinite(data8))){
if(data8 > 1 || isNaN(data8)){
validate16.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/top_p/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1},message:"must be <= 1"}];
return false;
}
else {
if(data8 < 0 || isNaN(data8)){
validate16.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/top_p/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs27 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.n !== undefined){
let data9 = data.n;
const _errs29 = errors;
if((!(((typeof data9 == "number") && (!(data9 % 1) && !isNaN(data9))) && (isFinite(data9)))) && (data9 !== null)){
validate16.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/n/type",keyword:"type",params:{type: schema17.properties.n.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs29){
if((typeof data9 == "number") && (isFinite(data9))){
if(data9 > 128 || isNaN(data9)){
validate16.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/n/maximum",keyword:"maximum",params:{comparison: "<=", limit: 128},message:"must be <= 128"}];
return false;
}
else {
if(data9 < 1 || isNaN(data9)){
validate16.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/n/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs29 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.stream !== undefined){
let data10 = data.stream;
const _errs31 = errors;
if((typeof data10 !== "boolean") && (data10 !== null)){
validate16.errors = [{instancePath:instancePath+"/stream",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stream/type",keyword:"type",params:{type: schema17.properties.stream.type},message:"must be boolean,null"}];
return false;
}
var valid1 = _errs31 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.stop !== undefined){
let data11 = data.stop;
const _errs33 = errors;
const _errs34 = errors;
let valid7 = false;
const _errs35 = errors;
const _errs36 = errors;
let valid8 = false;
const _errs37 = errors;
if(typeof data11 !== "string"){
const err9 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/0/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
var _valid2 = _errs37 === errors;
valid8 = valid8 || _valid2;
if(!valid8){
const _errs39 = errors;
if(errors === _errs39){
if(Array.isArray(data11)){
if(data11.length > 4){
const err10 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/0/anyOf/1/maxItems",keyword:"maxItems",params:{limit: 4},message:"must NOT have more than 4 items"};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
else {
var valid9 = true;
const len4 = data11.length;
for(let i4=0; i4<len4; i4++){
const _errs41 = errors;
if(typeof data11[i4] !== "string"){
const err11 = {instancePath:instancePath+"/stop/" + i4,schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/0/anyOf/1/items/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
var valid9 = _errs41 === errors;
if(!valid9){
break;
}
}
}
}
else {
const err12 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/0/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
var _valid2 = _errs39 === errors;
valid8 = valid8 || _valid2;
}
if(!valid8){
const err13 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/0/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
else {
errors = _errs36;
if(vErrors !== null){
if(_errs36){
vErrors.length = _errs36;
}
else {
vErrors = null;
}
}
}
var _valid1 = _errs35 === errors;
valid7 = valid7 || _valid1;
if(!valid7){
const _errs43 = errors;
if(data11 !== null){
const err14 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf/1/type",keyword:"type",params:{type: "null"},message:"must be null"};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
var _valid1 = _errs43 === errors;
valid7 = valid7 || _valid1;
}
if(!valid7){
const err15 = {instancePath:instancePath+"/stop",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/stop/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
validate16.errors = vErrors;
return false;
}
else {
errors = _errs34;
if(vErrors !== null){
if(_errs34){
vErrors.length = _errs34;
}
else {
vErrors = null;
}
}
}
var valid1 = _errs33 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.presence_penalty !== undefined){
let data13 = data.presence_penalty;
const _errs45 = errors;
if((!((typeof data13 == "number") && (isFinite(data13)))) && (data13 !== null)){
validate16.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/presence_penalty/type",keyword:"type",params:{type: schema17.properties.presence_penalty.type},message:"must be number,null"}];
return false;
}
if(errors === _errs45){
if((typeof data13 == "number") && (isFinite(data13))){
if(data13 > 2 || isNaN(data13)){
validate16.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/presence_penalty/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data13 < -2 || isNaN(data13)){
validate16.errors = [{instancePath:instancePath+"/presence_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/presence_penalty/minimum",keyword:"minimum",params:{comparison: ">=", limit: -2},message:"must be >= -2"}];
return false;
}
}
}
}
var valid1 = _errs45 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.frequency_penalty !== undefined){
let data14 = data.frequency_penalty;
const _errs47 = errors;
if((!((typeof data14 == "number") && (isFinite(data14)))) && (data14 !== null)){
validate16.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/frequency_penalty/type",keyword:"type",params:{type: schema17.properties.frequency_penalty.type},message:"must be number,null"}];
return false;
}
if(errors === _errs47){
if((typeof data14 == "number") && (isFinite(data14))){
if(data14 > 2 || isNaN(data14)){
validate16.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/frequency_penalty/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data14 < -2 || isNaN(data14)){
validate16.errors = [{instancePath:instancePath+"/frequency_penalty",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/frequency_penalty/minimum",keyword:"minimum",params:{comparison: ">=", limit: -2},message:"must be >= -2"}];
return false;
}
}
}
}
var valid1 = _errs47 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.logprobs !== undefined){
let data15 = data.logprobs;
const _errs49 = errors;
if((!(((typeof data15 == "number") && (!(data15 % 1) && !isNaN(data15))) && (isFinite(data15)))) && (data15 !== null)){
validate16.errors = [{instancePath:instancePath+"/logprobs",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/logprobs/type",keyword:"type",params:{type: schema17.properties.logprobs.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs49){
if((typeof data15 == "number") && (isFinite(data15))){
if(data15 > 5 || isNaN(data15)){
validate16.errors = [{instancePath:instancePath+"/logprobs",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/logprobs/maximum",keyword:"maximum",params:{comparison: "<=", limit: 5},message:"must be <= 5"}];
return false;
}
else {
if(data15 < 0 || isNaN(data15)){
validate16.errors = [{instancePath:instancePath+"/logprobs",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/logprobs/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs49 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.echo !== undefined){
let data16 = data.echo;
const _errs51 = errors;
if((typeof data16 !== "boolean") && (data16 !== null)){
validate16.errors = [{instancePath:instancePath+"/echo",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/echo/type",keyword:"type",params:{type: schema17.properties.echo.type},message:"must be boolean,null"}];
return false;
}
var valid1 = _errs51 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.suffix !== undefined){
let data17 = data.suffix;
const _errs53 = errors;
if((typeof data17 !== "string") && (data17 !== null)){
validate16.errors = [{instancePath:instancePath+"/suffix",schemaPath:"openapi-components#/definitions/CompletionRequest/properties/suffix/type",keyword:"type",params:{type: schema17.properties.suffix.type},message:"must be string,null"}];
return false;
}
var valid1 = _errs53 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
else {
validate16.errors = [{instancePath,schemaPath:"openapi-components#/definitions/CompletionRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate16.errors = vErrors;
return errors === 0;
}

exports["POST /v1/embeddings"] = validate17;
const schema18 = {"$ref":"openapi-components#/definitions/EmbeddingRequest"};
const schema19 = {"description":"OpenAI embeddings request; unknown extra fields are relayed.","type":"object","additionalProperties":true,"required":["model","input"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"input":{"anyOf":[{"type":"string"},{"type":"array","minItems":1,"items":{"type":"string"}},{"type":"array","minItems":1,"items":{"type":"integer"}},{"type":"array","minItems":1,"items":{"type":"array","items":{"type":"integer"}}}]},"encoding_format":{"type":"string","enum":["float","base64"],"default":"float"},"dimensions":{"type":"integer","maximum":1000000,"minimum":1},"user":{"type":"string"}}};

function validate17(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.input === undefined) && (missing0 = "input"))){
validate17.errors = [{instancePath,schemaPath:"openapi-components#/definitions/EmbeddingRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate17.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate17.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate17.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.input !== undefined){
let data1 = data.input;
const _errs5 = errors;
const _errs6 = errors;
let valid2 = false;
const _errs7 = errors;
if(typeof data1 !== "string"){
const err0 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid0 = _errs7 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs9 = errors;
if(errors === _errs9){
if(Array.isArray(data1)){
if(data1.length < 1){
const err1 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/1/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
else {
var valid3 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
const _errs11 = errors;
if(typeof data1[i0] !== "string"){
const err2 = {instancePath:instancePath+"/input/" + i0,schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/1/items/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
var valid3 = _errs11 === errors;
if(!valid3){
break;
}
}
}
}
else {
const err3 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
var _valid0 = _errs9 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs13 = errors;
if(errors === _errs13){
if(Array.isArray(data1)){
if(data1.length < 1){
const err4 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/2/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
else {
var valid4 = true;
const len1 = data1.length;
for(let i1=0; i1<len1; i1++){
let data3 = data1[i1];
const _errs15 = errors;
if(!(((typeof data3 == "number") && (!(data3 % 1) && !isNaN(data3))) && (isFinite(data3)))){
const err5 = {instancePath:instancePath+"/input/" + i1,schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/2/items/type",keyword:"type",params:{type: "integer"},message:"must be integer"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var valid4 = _errs15 === errors;
if(!valid4){
break;
}
}
}
}
else {
const err6 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/2/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
var _valid0 = _errs13 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs17 = errors;
if(errors === _errs17){
if(Array.isArray(data1)){
if(data1.length < 1){
const err7 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/3/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
else {
var valid5 = true;
const len2 = data1.length;
for(let i2=0; i2<len2; i2++){
let data4 = data1[i2];
const _errs19 = errors;
if(errors === _errs19){
if(Array.isArray(data4)){
var valid6 = true;
const len3 = data4.length;
for(let i3=0; i3<len3; i3++){
let data5 = data4[i3];
const _errs21 = errors;
if(!(((typeof data5 == "number") && (!(data5 % 1) && !isNaN(data5))) && (isFinite(data5)))){
const err8 = {instancePath:instancePath+"/input/" + i2+"/" + i3,schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/3/items/items/type",keyword:"type",params:{type: "integer"},message:"must be integer"};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
var valid6 = _errs21 === errors;
if(!valid6){
break;
}
}
}
else {
const err9 = {instancePath:instancePath+"/input/" + i2,schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/3/items/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
var valid5 = _errs19 === errors;
if(!valid5){
break;
}
}
}
}
else {
const err10 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf/3/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
var _valid0 = _errs17 === errors;
valid2 = valid2 || _valid0;
}
}
}
if(!valid2){
const err11 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/input/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
validate17.errors = vErrors;
return false;
}
else {
errors = _errs6;
if(vErrors !== null){
if(_errs6){
vErrors.length = _errs6;
}
else {
vErrors = null;
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.encoding_format !== undefined){
let data6 = data.encoding_format;
const _errs23 = errors;
if(typeof data6 !== "string"){
validate17.errors = [{instancePath:instancePath+"/encoding_format",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/encoding_format/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((data6 === "float") || (data6 === "base64"))){
validate17.errors = [{instancePath:instancePath+"/encoding_format",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/encoding_format/enum",keyword:"enum",params:{allowedValues: schema19.properties.encoding_format.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs23 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.dimensions !== undefined){
let data7 = data.dimensions;
const _errs25 = errors;
if(!(((typeof data7 == "number") && (!(data7 % 1) && !isNaN(data7))) && (isFinite(data7)))){
validate17.errors = [{instancePath:instancePath+"/dimensions",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/dimensions/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs25){
if((typeof data7 == "number") && (isFinite(data7))){
if(data7 > 1000000 || isNaN(data7)){
validate17.errors = [{instancePath:instancePath+"/dimensions",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/dimensions/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000},message:"must be <= 1000000"}];
return false;
}
else {
if(data7 < 1 || isNaN(data7)){
validate17.errors = [{instancePath:instancePath+"/dimensions",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/dimensions/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs25 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.user !== undefined){
const _errs27 = errors;
if(typeof data.user !== "string"){
validate17.errors = [{instancePath:instancePath+"/user",schemaPath:"openapi-components#/definitions/EmbeddingRequest/properties/user/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid1 = _errs27 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
else {
validate17.errors = [{instancePath,schemaPath:"openapi-components#/definitions/EmbeddingRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate17.errors = vErrors;
return errors === 0;
}

exports["POST /v1/responses"] = validate18;
const schema20 = {"$ref":"openapi-components#/definitions/ResponseRequest"};
const schema21 = {"description":"OpenAI Responses API request; relayed unchanged except the checks below.","type":"object","additionalProperties":true,"required":["model"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"input":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"object","additionalProperties":true}}]},"instructions":{"type":["string","null"]},"max_output_tokens":{"type":["integer","null"],"maximum":100000000,"minimum":1},"temperature":{"type":["number","null"],"minimum":0,"maximum":2},"top_p":{"type":["number","null"],"minimum":0,"maximum":1},"stream":{"type":["boolean","null"]}}};

function validate18(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.model === undefined) && (missing0 = "model")){
validate18.errors = [{instancePath,schemaPath:"openapi-components#/definitions/ResponseRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate18.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate18.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate18.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.input !== undefined){
let data1 = data.input;
const _errs5 = errors;
const _errs6 = errors;
let valid2 = false;
const _errs7 = errors;
if(typeof data1 !== "string"){
const err0 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/input/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid0 = _errs7 === errors;
valid2 = valid2 || _valid0;
if(!valid2){
const _errs9 = errors;
if(errors === _errs9){
if(Array.isArray(data1)){
var valid3 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
let data2 = data1[i0];
const _errs11 = errors;
if(errors === _errs11){
if(data2 && typeof data2 == "object" && !Array.isArray(data2)){
}
else {
const err1 = {instancePath:instancePath+"/input/" + i0,schemaPath:"openapi-components#/definitions/ResponseRequest/properties/input/anyOf/1/items/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
var valid3 = _errs11 === errors;
if(!valid3){
break;
}
}
}
else {
const err2 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/input/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
var _valid0 = _errs9 === errors;
valid2 = valid2 || _valid0;
}
if(!valid2){
const err3 = {instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/input/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
validate18.errors = vErrors;
return false;
}
else {
errors = _errs6;
if(vErrors !== null){
if(_errs6){
vErrors.length = _errs6;
}
else {
vErrors = null;
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.instructions !== undefined){
let data3 = data.instructions;
const _errs14 = errors;
if((typeof data3 !== "string") && (data3 !== null)){
validate18.errors = [{instancePath:instancePath+"/instructions",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/instructions/type",keyword:"type",params:{type: schema21.properties.instructions.type},message:"must be string,null"}];
return false;
}
var valid1 = _errs14 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.max_output_tokens !== undefined){
let data4 = data.max_output_tokens;
const _errs16 = errors;
if((!(((typeof data4 == "number") && (!(data4 % 1) && !isNaN(data4))) && (isFinite(data4)))) && (data4 !== null)){
validate18.errors = [{instancePath:instancePath+"/max_output_tokens",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/max_output_tokens/type",keyword:"type",params:{type: schema21.properties.max_output_tokens.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs16){
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 100000000 || isNaN(data4)){
validate18.errors = [{instancePath:instancePath+"/max_output_tokens",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/max_output_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data4 < 1 || isNaN(data4)){
validate18.errors = [{instancePath:instancePath+"/max_output_tokens",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/max_output_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs16 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.temperature !== undefined){
let data5 = data.temperature;
const _errs18 = errors;
if((!((typeof data5 == "number") && (isFinite(data5)))) && (data5 !== null)){
validate18.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/temperature/type",keyword:"type",params:{type: schema21.properties.temperature.type},message:"must be number,null"}];
return false;
}
if(errors === _errs18){
if((typeof data5 == "number") && (isFinite(data5))){
if(data5 > 2 || isNaN(data5)){
validate18.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/temperature/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2},message:"must be <= 2"}];
return false;
}
else {
if(data5 < 0 || isNaN(data5)){
validate18.errors = [{instancePath:instancePath+"/temperature",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/temperature/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs18 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.top_p !== undefined){
let data6 = data.top_p;
const _errs20 = errors;
if((!((typeof data6 == "number") && (isFinite(data6)))) && (data6 !== null)){
validate18.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/top_p/type",keyword:"type",params:{type: schema21.properties.top_p.type},message:"must be number,null"}];
return false;
}
if(errors === _errs20){
if((typeof data6 == "number") && (isFinite(data6))){
if(data6 > 1 || isNaN(data6)){
validate18.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/top_p/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1},message:"must be <= 1"}];
return false;
}
else {
if(data6 < 0 || isNaN(data6)){
validate18.errors = [{instancePath:instancePath+"/top_p",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/top_p/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs20 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.stream !== undefined){
let data7 = data.stream;
const _errs22 = errors;
if((typeof data7 !== "boolean") && (data7 !== null)){
validate18.errors = [{instancePath:instancePath+"/stream",schemaPath:"openapi-components#/definitions/ResponseRequest/properties/stream/type",keyword:"type",params:{type: schema21.properties.stream.type},message:"must be boolean,null"}];
return false;
}
var valid1 = _errs22 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
}
}
else {
validate18.errors = [{instancePath,schemaPath:"openapi-components#/definitions/ResponseRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate18.errors = vErrors;
return errors === 0;
}

exports["POST /v1/messages"] = validate19;
const schema22 = {"$ref":"openapi-components#/definitions/MessagesRequest"};
const schema23 = {"description":"Anthropic Messages API request; relayed unchanged after these checks.","type":"object","additionalProperties":true,"required":["model","max_tokens","messages"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"max_tokens":{"type":"integer","minimum":1,"maximum":100000000},"messages":{"type":"array","items":{"type":"object","additionalProperties":true,"required":["role","content"],"properties":{"role":{"type":"string","enum":["user","assistant"]},"content":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"object","additionalProperties":true}}]}}}},"system":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"object","additionalProperties":true}}]},"stream":{"type":"boolean"}}};

function validate19(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((((data.model === undefined) && (missing0 = "model")) || ((data.max_tokens === undefined) && (missing0 = "max_tokens"))) || ((data.messages === undefined) && (missing0 = "messages"))){
validate19.errors = [{instancePath,schemaPath:"openapi-components#/definitions/MessagesRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate19.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate19.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate19.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.max_tokens !== undefined){
let data1 = data.max_tokens;
const _errs5 = errors;
if(!(((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1))) && (isFinite(data1)))){
validate19.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/max_tokens/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs5){
if((typeof data1 == "number") && (isFinite(data1))){
if(data1 > 100000000 || isNaN(data1)){
validate19.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/max_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data1 < 1 || isNaN(data1)){
validate19.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/max_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.messages !== undefined){
let data2 = data.messages;
const _errs7 = errors;
if(errors === _errs7){
if(Array.isArray(data2)){
var valid2 = true;
const len0 = data2.length;
for(let i0=0; i0<len0; i0++){
let data3 = data2[i0];
const _errs9 = errors;
if(errors === _errs9){
if(data3 && typeof data3 == "object" && !Array.isArray(data3)){
let missing1;
if(((data3.role === undefined) && (missing1 = "role")) || ((data3.content === undefined) && (missing1 = "content"))){
validate19.errors = [{instancePath:instancePath+"/messages/" + i0,schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/required",keyword:"required",params:{missingProperty: missing1},message:"must have required property '"+missing1+"'"}];
return false;
}
else {
if(data3.role !== undefined){
let data4 = data3.role;
const _errs12 = errors;
if(typeof data4 !== "string"){
validate19.errors = [{instancePath:instancePath+"/messages/" + i0+"/role",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/role/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((data4 === "user") || (data4 === "assistant"))){
validate19.errors = [{instancePath:instancePath+"/messages/" + i0+"/role",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/role/enum",keyword:"enum",params:{allowedValues: schema23.properties.messages.items.properties.role.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid3 = _errs12 === errors;
}
else {
var valid3 = true;
}
if(valid3){
if(data3.content !== undefined){
let data5 = data3.content;
const _errs14 = errors;
const _errs15 = errors;
let valid4 = false;
const _errs16 = errors;
if(typeof data5 !== "string"){
const err0 = {instancePath:instancePath+"/messages/" + i0+"/content",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/content/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
var _valid0 = _errs16 === errors;
valid4 = valid4 || _valid0;
if(!valid4){
const _errs18 = errors;
if(errors === _errs18){
if(Array.isArray(data5)){
var valid5 = true;
const len1 = data5.length;
for(let i1=0; i1<len1; i1++){
let data6 = data5[i1];
const _errs20 = errors;
if(errors === _errs20){
if(data6 && typeof data6 == "object" && !Array.isArray(data6)){
}
else {
const err1 = {instancePath:instancePath+"/messages/" + i0+"/content/" + i1,schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/content/anyOf/1/items/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
var valid5 = _errs20 === errors;
if(!valid5){
break;
}
}
}
else {
const err2 = {instancePath:instancePath+"/messages/" + i0+"/content",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/content/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
var _valid0 = _errs18 === errors;
valid4 = valid4 || _valid0;
}
if(!valid4){
const err3 = {instancePath:instancePath+"/messages/" + i0+"/content",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/properties/content/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
validate19.errors = vErrors;
return false;
}
else {
errors = _errs15;
if(vErrors !== null){
if(_errs15){
vErrors.length = _errs15;
}
else {
vErrors = null;
}
}
}
var valid3 = _errs14 === errors;
}
else {
var valid3 = true;
}
}
}
}
else {
validate19.errors = [{instancePath:instancePath+"/messages/" + i0,schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/items/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
var valid2 = _errs9 === errors;
if(!valid2){
break;
}
}
}
else {
validate19.errors = [{instancePath:instancePath+"/messages",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/messages/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.system !== undefined){
let data7 = data.system;
const _errs23 = errors;
const _errs24 = errors;
let valid6 = false;
const _errs25 = errors;
if(typeof data7 !== "string"){
const err4 = {instancePath:instancePath+"/system",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/system/anyOf/0/type",keyword:"type",params:{type: "string"},message:"must be string"};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
var _valid1 = _errs25 === errors;
valid6 = valid6 || _valid1;
if(!valid6){
const _errs27 = errors;
if(errors === _errs27){
if(Array.isArray(data7)){
var valid7 = true;
const len2 = data7.length;
for(let i2=0; i2<len2; i2++){
let data8 = data7[i2];
const _errs29 = errors;
if(errors === _errs29){
if(data8 && typeof data8 == "object" && !Array.isArray(data8)){
}
else {
const err5 = {instancePath:instancePath+"/system/" + i2,schemaPath:"openapi-components#/definitions/MessagesRequest/properties/system/anyOf/1/items/type",keyword:"type",params:{type: "object"},message:"must be object"};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
var valid7 = _errs29 === errors;
if(!valid7){
break;
}
}
}
else {
const err6 = {instancePath:instancePath+"/system",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/system/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array"};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
var _valid1 = _errs27 === errors;
valid6 = valid6 || _valid1;
}
if(!valid6){
const err7 = {instancePath:instancePath+"/system",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/system/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf"};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
validate19.errors = vErrors;
return false;
}
else {
errors = _errs24;
if(vErrors !== null){
if(_errs24){
vErrors.length = _errs24;
}
else {
vErrors = null;
}
}
}
var valid1 = _errs23 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.stream !== undefined){
const _errs32 = errors;
if(typeof data.stream !== "boolean"){
validate19.errors = [{instancePath:instancePath+"/stream",schemaPath:"openapi-components#/definitions/MessagesRequest/properties/stream/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
var valid1 = _errs32 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
else {
validate19.errors = [{instancePath,schemaPath:"openapi-components#/definitions/MessagesRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate19.errors = vErrors;
return errors === 0;
}

exports["POST /v1/messages/count_tokens"] = validate20;
const schema24 = {"$ref":"openapi-components#/definitions/CountTokensRequest"};
const schema25 = {"description":"Anthropic's token-counting request (`/v1/messages/count_tokens`).","type":"object","additionalProperties":true,"required":["model","messages"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"messages":{"type":"array","items":{"type":"object","additionalProperties":true}}}};

function validate20(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.messages === undefined) && (missing0 = "messages"))){
validate20.errors = [{instancePath,schemaPath:"openapi-components#/definitions/CountTokensRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate20.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CountTokensRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate20.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CountTokensRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate20.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/CountTokensRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.messages !== undefined){
let data1 = data.messages;
const _errs5 = errors;
if(errors === _errs5){
if(Array.isArray(data1)){
var valid2 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
let data2 = data1[i0];
const _errs7 = errors;
if(errors === _errs7){
if(data2 && typeof data2 == "object" && !Array.isArray(data2)){
}
else {
validate20.errors = [{instancePath:instancePath+"/messages/" + i0,schemaPath:"openapi-components#/definitions/CountTokensRequest/properties/messages/items/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
var valid2 = _errs7 === errors;
if(!valid2){
break;
}
}
}
else {
validate20.errors = [{instancePath:instancePath+"/messages",schemaPath:"openapi-components#/definitions/CountTokensRequest/properties/messages/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
}
}
}
else {
validate20.errors = [{instancePath,schemaPath:"openapi-components#/definitions/CountTokensRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate20.errors = vErrors;
return errors === 0;
}

exports["POST /v1/images/generations"] = validate21;
const schema26 = {"$ref":"openapi-components#/definitions/ImageGenerationRequest"};
const schema27 = {"description":"OpenAI image generation request; unknown extra fields are relayed.","type":"object","additionalProperties":true,"required":["model","prompt"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"prompt":{"type":"string","minLength":1},"n":{"type":"integer","minimum":1,"maximum":10,"default":1},"size":{"type":"string","pattern":"^(auto|[0-9]{2,5}x[0-9]{2,5})$","default":"1024x1024","description":"Absent, the call is priced as 1024x1024 (the API's default size)."},"quality":{"type":"string","enum":["standard","hd","auto","low","medium","high"],"default":"standard"},"style":{"type":"string","enum":["vivid","natural"],"default":"vivid"},"response_format":{"type":"string","enum":["url","b64_json"],"default":"url"},"stream":{"type":"boolean","description":"`true` is refused with 400 `invalid_request` before anything is reserved: a streamed image answer cannot be charged per image returned. Image edits (multipart) follow the same rule."}}};
const pattern0 = new RegExp("^(auto|[0-9]{2,5}x[0-9]{2,5})$", "u");

function validate21(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.prompt === undefined) && (missing0 = "prompt"))){
validate21.errors = [{instancePath,schemaPath:"openapi-components#/definitions/ImageGenerationRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate21.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate21.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate21.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.prompt !== undefined){
let data1 = data.prompt;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) < 1){
validate21.errors = [{instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/prompt/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
else {
validate21.errors = [{instancePath:instancePath+"/prompt",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/prompt/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.n !== undefined){
let data2 = data.n;
const _errs7 = errors;
if(!(((typeof data2 == "number") && (!(data2 % 1) && !isNaN(data2))) && (isFinite(data2)))){
validate21.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/n/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs7){
if((typeof data2 == "number") && (isFinite(data2))){
if(data2 > 10 || isNaN(data2)){
validate21.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/n/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10},message:"must be <= 10"}];
return false;
}
else {
if(data2 < 1 || isNaN(data2)){
validate21.errors = [{instancePath:instancePath+"/n",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/n/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.size !== undefined){
let data3 = data.size;
const _errs9 = errors;
if(errors === _errs9){
if(typeof data3 === "string"){
if(!pattern0.test(data3)){
validate21.errors = [{instancePath:instancePath+"/size",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/size/pattern",keyword:"pattern",params:{pattern: "^(auto|[0-9]{2,5}x[0-9]{2,5})$"},message:"must match pattern \""+"^(auto|[0-9]{2,5}x[0-9]{2,5})$"+"\""}];
return false;
}
}
else {
validate21.errors = [{instancePath:instancePath+"/size",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/size/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs9 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.quality !== undefined){
let data4 = data.quality;
const _errs11 = errors;
if(typeof data4 !== "string"){
validate21.errors = [{instancePath:instancePath+"/quality",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/quality/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((((((data4 === "standard") || (data4 === "hd")) || (data4 === "auto")) || (data4 === "low")) || (data4 === "medium")) || (data4 === "high"))){
validate21.errors = [{instancePath:instancePath+"/quality",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/quality/enum",keyword:"enum",params:{allowedValues: schema27.properties.quality.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs11 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.style !== undefined){
let data5 = data.style;
const _errs13 = errors;
if(typeof data5 !== "string"){
validate21.errors = [{instancePath:instancePath+"/style",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/style/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((data5 === "vivid") || (data5 === "natural"))){
validate21.errors = [{instancePath:instancePath+"/style",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/style/enum",keyword:"enum",params:{allowedValues: schema27.properties.style.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs13 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.response_format !== undefined){
let data6 = data.response_format;
const _errs15 = errors;
if(typeof data6 !== "string"){
validate21.errors = [{instancePath:instancePath+"/response_format",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/response_format/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((data6 === "url") || (data6 === "b64_json"))){
validate21.errors = [{instancePath:instancePath+"/response_format",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/response_format/enum",keyword:"enum",params:{allowedValues: schema27.properties.response_format.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs15 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.stream !== undefined){
const _errs17 = errors;
if(typeof data.stream !== "boolean"){
validate21.errors = [{instancePath:instancePath+"/stream",schemaPath:"openapi-components#/definitions/ImageGenerationRequest/properties/stream/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
var valid1 = _errs17 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
}
}
}
else {
validate21.errors = [{instancePath,schemaPath:"openapi-components#/definitions/ImageGenerationRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate21.errors = vErrors;
return errors === 0;
}

exports["POST /v1/audio/speech"] = validate22;
const schema28 = {"$ref":"openapi-components#/definitions/SpeechRequest"};
const schema29 = {"description":"OpenAI text-to-speech request; unknown extra fields are relayed.","type":"object","additionalProperties":true,"required":["model","input"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"input":{"type":"string","minLength":1,"maxLength":100000},"voice":{"type":"string"},"response_format":{"type":"string","enum":["mp3","opus","aac","flac","wav","pcm"]},"speed":{"type":"number","minimum":0.25,"maximum":4}}};

function validate22(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.model === undefined) && (missing0 = "model")) || ((data.input === undefined) && (missing0 = "input"))){
validate22.errors = [{instancePath,schemaPath:"openapi-components#/definitions/SpeechRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate22.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate22.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate22.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.input !== undefined){
let data1 = data.input;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 100000){
validate22.errors = [{instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/input/maxLength",keyword:"maxLength",params:{limit: 100000},message:"must NOT have more than 100000 characters"}];
return false;
}
else {
if(func2(data1) < 1){
validate22.errors = [{instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/input/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate22.errors = [{instancePath:instancePath+"/input",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/input/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.voice !== undefined){
const _errs7 = errors;
if(typeof data.voice !== "string"){
validate22.errors = [{instancePath:instancePath+"/voice",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/voice/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.response_format !== undefined){
let data3 = data.response_format;
const _errs9 = errors;
if(typeof data3 !== "string"){
validate22.errors = [{instancePath:instancePath+"/response_format",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/response_format/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((((((data3 === "mp3") || (data3 === "opus")) || (data3 === "aac")) || (data3 === "flac")) || (data3 === "wav")) || (data3 === "pcm"))){
validate22.errors = [{instancePath:instancePath+"/response_format",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/response_format/enum",keyword:"enum",params:{allowedValues: schema29.properties.response_format.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs9 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.speed !== undefined){
let data4 = data.speed;
const _errs11 = errors;
if(errors === _errs11){
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 4 || isNaN(data4)){
validate22.errors = [{instancePath:instancePath+"/speed",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/speed/maximum",keyword:"maximum",params:{comparison: "<=", limit: 4},message:"must be <= 4"}];
return false;
}
else {
if(data4 < 0.25 || isNaN(data4)){
validate22.errors = [{instancePath:instancePath+"/speed",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/speed/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0.25},message:"must be >= 0.25"}];
return false;
}
}
}
else {
validate22.errors = [{instancePath:instancePath+"/speed",schemaPath:"openapi-components#/definitions/SpeechRequest/properties/speed/type",keyword:"type",params:{type: "number"},message:"must be number"}];
return false;
}
}
var valid1 = _errs11 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
else {
validate22.errors = [{instancePath,schemaPath:"openapi-components#/definitions/SpeechRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate22.errors = vErrors;
return errors === 0;
}

exports["POST /v1/estimate"] = validate23;
const schema30 = {"$ref":"openapi-components#/definitions/EstimateRequest"};
const schema31 = {"type":"object","additionalProperties":false,"required":["model","prompt_tokens","max_tokens"],"properties":{"model":{"type":"string","minLength":1,"maxLength":256},"prompt_tokens":{"type":"integer","minimum":0,"maximum":100000000},"max_tokens":{"type":"integer","minimum":0,"maximum":100000000},"cached_tokens":{"type":"integer","minimum":0,"maximum":100000000,"description":"Of `prompt_tokens`, how many the provider will read from its prompt cache: priced at the model's\n`input_cache_read` (its `prompt` price when it has none). At most `prompt_tokens`.\n"}}};

function validate23(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((((data.model === undefined) && (missing0 = "model")) || ((data.prompt_tokens === undefined) && (missing0 = "prompt_tokens"))) || ((data.max_tokens === undefined) && (missing0 = "max_tokens"))){
validate23.errors = [{instancePath,schemaPath:"openapi-components#/definitions/EstimateRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!((((key0 === "model") || (key0 === "prompt_tokens")) || (key0 === "max_tokens")) || (key0 === "cached_tokens"))){
validate23.errors = [{instancePath,schemaPath:"openapi-components#/definitions/EstimateRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.model !== undefined){
let data0 = data.model;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate23.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/model/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate23.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/model/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate23.errors = [{instancePath:instancePath+"/model",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/model/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.prompt_tokens !== undefined){
let data1 = data.prompt_tokens;
const _errs5 = errors;
if(!(((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1))) && (isFinite(data1)))){
validate23.errors = [{instancePath:instancePath+"/prompt_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/prompt_tokens/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs5){
if((typeof data1 == "number") && (isFinite(data1))){
if(data1 > 100000000 || isNaN(data1)){
validate23.errors = [{instancePath:instancePath+"/prompt_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/prompt_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data1 < 0 || isNaN(data1)){
validate23.errors = [{instancePath:instancePath+"/prompt_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/prompt_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.max_tokens !== undefined){
let data2 = data.max_tokens;
const _errs7 = errors;
if(!(((typeof data2 == "number") && (!(data2 % 1) && !isNaN(data2))) && (isFinite(data2)))){
validate23.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/max_tokens/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs7){
if((typeof data2 == "number") && (isFinite(data2))){
if(data2 > 100000000 || isNaN(data2)){
validate23.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/max_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data2 < 0 || isNaN(data2)){
validate23.errors = [{instancePath:instancePath+"/max_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/max_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.cached_tokens !== undefined){
let data3 = data.cached_tokens;
const _errs9 = errors;
if(!(((typeof data3 == "number") && (!(data3 % 1) && !isNaN(data3))) && (isFinite(data3)))){
validate23.errors = [{instancePath:instancePath+"/cached_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/cached_tokens/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs9){
if((typeof data3 == "number") && (isFinite(data3))){
if(data3 > 100000000 || isNaN(data3)){
validate23.errors = [{instancePath:instancePath+"/cached_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/cached_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100000000},message:"must be <= 100000000"}];
return false;
}
else {
if(data3 < 0 || isNaN(data3)){
validate23.errors = [{instancePath:instancePath+"/cached_tokens",schemaPath:"openapi-components#/definitions/EstimateRequest/properties/cached_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs9 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
else {
validate23.errors = [{instancePath,schemaPath:"openapi-components#/definitions/EstimateRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate23.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/create"] = validate24;
const schema32 = {"$ref":"openapi-components#/definitions/WalletCreateRequest"};
const schema33 = {"type":"object","additionalProperties":false,"required":["cashu_token"],"properties":{"cashu_token":{"$ref":"openapi-components#/definitions/CashuTokenString"},"admin_key":{"type":"string","maxLength":256,"description":"Accepted for compatibility with one published variant and ignored (no admin keys)."}}};
const schema34 = {"type":"string","description":"A serialized Cashu eCash token (`cashuA…` v3 or `cashuB…` v4).","minLength":10,"pattern":"^cashu[AB]"};
const pattern1 = new RegExp("^cashu[AB]", "u");

function validate25(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.cashu_token === undefined) && (missing0 = "cashu_token")){
validate25.errors = [{instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs1 = errors;
for(const key0 in data){
if(!((key0 === "cashu_token") || (key0 === "admin_key"))){
validate25.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.cashu_token !== undefined){
let data0 = data.cashu_token;
const _errs2 = errors;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) < 10){
validate25.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/minLength",keyword:"minLength",params:{limit: 10},message:"must NOT have fewer than 10 characters"}];
return false;
}
else {
if(!pattern1.test(data0)){
validate25.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/pattern",keyword:"pattern",params:{pattern: "^cashu[AB]"},message:"must match pattern \""+"^cashu[AB]"+"\""}];
return false;
}
}
}
else {
validate25.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.admin_key !== undefined){
let data1 = data.admin_key;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 256){
validate25.errors = [{instancePath:instancePath+"/admin_key",schemaPath:"#/properties/admin_key/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
}
else {
validate25.errors = [{instancePath:instancePath+"/admin_key",schemaPath:"#/properties/admin_key/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid0 = _errs5 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
else {
validate25.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate25.errors = vErrors;
return errors === 0;
}


function validate24(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate25(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate25.errors : vErrors.concat(validate25.errors);
errors = vErrors.length;
}
validate24.errors = vErrors;
return errors === 0;
}

exports["POST /v1/batches"] = validate27;
const schema35 = {"$ref":"openapi-components#/definitions/BatchCreateRequest"};
const schema36 = {"type":"object","additionalProperties":true,"required":["input_file_id","endpoint","completion_window"],"properties":{"input_file_id":{"type":"string","minLength":1,"description":"A file of the calling key uploaded with purpose `batch`."},"endpoint":{"type":"string","enum":["/v1/chat/completions","/v1/completions","/v1/embeddings","/v1/responses"],"description":"Must be the `url` of the input file's lines."},"completion_window":{"type":"string","enum":["24h"]},"metadata":{"type":["object","null"],"additionalProperties":{"type":"string"}}}};

function validate27(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((((data.input_file_id === undefined) && (missing0 = "input_file_id")) || ((data.endpoint === undefined) && (missing0 = "endpoint"))) || ((data.completion_window === undefined) && (missing0 = "completion_window"))){
validate27.errors = [{instancePath,schemaPath:"openapi-components#/definitions/BatchCreateRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
if(data.input_file_id !== undefined){
let data0 = data.input_file_id;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) < 1){
validate27.errors = [{instancePath:instancePath+"/input_file_id",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/input_file_id/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
else {
validate27.errors = [{instancePath:instancePath+"/input_file_id",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/input_file_id/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.endpoint !== undefined){
let data1 = data.endpoint;
const _errs5 = errors;
if(typeof data1 !== "string"){
validate27.errors = [{instancePath:instancePath+"/endpoint",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/endpoint/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((((data1 === "/v1/chat/completions") || (data1 === "/v1/completions")) || (data1 === "/v1/embeddings")) || (data1 === "/v1/responses"))){
validate27.errors = [{instancePath:instancePath+"/endpoint",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/endpoint/enum",keyword:"enum",params:{allowedValues: schema36.properties.endpoint.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.completion_window !== undefined){
let data2 = data.completion_window;
const _errs7 = errors;
if(typeof data2 !== "string"){
validate27.errors = [{instancePath:instancePath+"/completion_window",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/completion_window/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!(data2 === "24h")){
validate27.errors = [{instancePath:instancePath+"/completion_window",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/completion_window/enum",keyword:"enum",params:{allowedValues: schema36.properties.completion_window.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.metadata !== undefined){
let data3 = data.metadata;
const _errs9 = errors;
if((!(data3 && typeof data3 == "object" && !Array.isArray(data3))) && (data3 !== null)){
validate27.errors = [{instancePath:instancePath+"/metadata",schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/metadata/type",keyword:"type",params:{type: schema36.properties.metadata.type},message:"must be object,null"}];
return false;
}
if(errors === _errs9){
if(data3 && typeof data3 == "object" && !Array.isArray(data3)){
for(const key0 in data3){
const _errs12 = errors;
if(typeof data3[key0] !== "string"){
validate27.errors = [{instancePath:instancePath+"/metadata/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"openapi-components#/definitions/BatchCreateRequest/properties/metadata/additionalProperties/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid2 = _errs12 === errors;
if(!valid2){
break;
}
}
}
}
var valid1 = _errs9 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
else {
validate27.errors = [{instancePath,schemaPath:"openapi-components#/definitions/BatchCreateRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate27.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/topup"] = validate28;
const schema37 = {"$ref":"openapi-components#/definitions/TopupRequest"};
const schema38 = {"description":"The token, unless it is sent as the query parameter `cashu_token` (exactly one of the two).","type":"object","additionalProperties":false,"properties":{"cashu_token":{"$ref":"openapi-components#/definitions/CashuTokenString"}}};

function validate29(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs1 = errors;
for(const key0 in data){
if(!(key0 === "cashu_token")){
validate29.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.cashu_token !== undefined){
let data0 = data.cashu_token;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) < 10){
validate29.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/minLength",keyword:"minLength",params:{limit: 10},message:"must NOT have fewer than 10 characters"}];
return false;
}
else {
if(!pattern1.test(data0)){
validate29.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/pattern",keyword:"pattern",params:{pattern: "^cashu[AB]"},message:"must match pattern \""+"^cashu[AB]"+"\""}];
return false;
}
}
}
else {
validate29.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
}
else {
validate29.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate29.errors = vErrors;
return errors === 0;
}


function validate28(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate29(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate29.errors : vErrors.concat(validate29.errors);
errors = vErrors.length;
}
validate28.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/withdraw"] = validate31;
const schema40 = {"$ref":"openapi-components#/definitions/WithdrawRequest"};
const schema41 = {"type":"object","additionalProperties":false,"properties":{"amount":{"type":"integer","minimum":1,"maximum":2100000000000000,"description":"Sats to withdraw (default every whole sat of the available balance)."},"mint":{"type":"string","format":"uri","maxLength":2048,"description":"A mint this node trusts (default the primary mint)."}}};
const formats0 = require("ajv-formats/dist/formats").fullFormats.uri;

function validate31(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs2 = errors;
for(const key0 in data){
if(!((key0 === "amount") || (key0 === "mint"))){
validate31.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WithdrawRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.amount !== undefined){
let data0 = data.amount;
const _errs3 = errors;
if(!(((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0))) && (isFinite(data0)))){
validate31.errors = [{instancePath:instancePath+"/amount",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/amount/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs3){
if((typeof data0 == "number") && (isFinite(data0))){
if(data0 > 2100000000000000 || isNaN(data0)){
validate31.errors = [{instancePath:instancePath+"/amount",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/amount/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2100000000000000},message:"must be <= 2100000000000000"}];
return false;
}
else {
if(data0 < 1 || isNaN(data0)){
validate31.errors = [{instancePath:instancePath+"/amount",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/amount/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.mint !== undefined){
let data1 = data.mint;
const _errs5 = errors;
if(errors === _errs5){
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 2048){
validate31.errors = [{instancePath:instancePath+"/mint",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/mint/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters"}];
return false;
}
else {
if(!(formats0(data1))){
validate31.errors = [{instancePath:instancePath+"/mint",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/mint/format",keyword:"format",params:{format: "uri"},message:"must match format \""+"uri"+"\""}];
return false;
}
}
}
else {
validate31.errors = [{instancePath:instancePath+"/mint",schemaPath:"openapi-components#/definitions/WithdrawRequest/properties/mint/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
}
}
}
else {
validate31.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WithdrawRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate31.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/refund"] = validate32;
const schema42 = {"$ref":"openapi-components#/definitions/WalletRefundRequest"};
const schema43 = {"description":"No fields (an eCash token), or `to` naming the key's refund address.","type":"object","additionalProperties":false,"properties":{"to":{"type":"string","enum":["refund_address"]}}};

function validate32(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "to")){
validate32.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WalletRefundRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.to !== undefined){
let data0 = data.to;
if(typeof data0 !== "string"){
validate32.errors = [{instancePath:instancePath+"/to",schemaPath:"openapi-components#/definitions/WalletRefundRequest/properties/to/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!(data0 === "refund_address")){
validate32.errors = [{instancePath:instancePath+"/to",schemaPath:"openapi-components#/definitions/WalletRefundRequest/properties/to/enum",keyword:"enum",params:{allowedValues: schema43.properties.to.enum},message:"must be equal to one of the allowed values"}];
return false;
}
}
}
}
else {
validate32.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WalletRefundRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate32.errors = vErrors;
return errors === 0;
}

exports["POST /v1/balance/refund"] = validate33;
const schema44 = {"$ref":"openapi-components#/definitions/BalanceRefundRequest"};
const schema45 = {"type":"object","additionalProperties":false,"properties":{"cashu_token":{"$ref":"openapi-components#/definitions/CashuTokenString"}}};

function validate34(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs1 = errors;
for(const key0 in data){
if(!(key0 === "cashu_token")){
validate34.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.cashu_token !== undefined){
let data0 = data.cashu_token;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) < 10){
validate34.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/minLength",keyword:"minLength",params:{limit: 10},message:"must NOT have fewer than 10 characters"}];
return false;
}
else {
if(!pattern1.test(data0)){
validate34.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/pattern",keyword:"pattern",params:{pattern: "^cashu[AB]"},message:"must match pattern \""+"^cashu[AB]"+"\""}];
return false;
}
}
}
else {
validate34.errors = [{instancePath:instancePath+"/cashu_token",schemaPath:"openapi-components#/definitions/CashuTokenString/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
}
else {
validate34.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate34.errors = vErrors;
return errors === 0;
}


function validate33(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate34(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate34.errors : vErrors.concat(validate34.errors);
errors = vErrors.length;
}
validate33.errors = vErrors;
return errors === 0;
}

exports["POST /v1/balance/child-key"] = validate36;
const schema47 = {"$ref":"openapi-components#/definitions/ChildKeyRequest"};
const schema48 = {"type":"object","additionalProperties":false,"required":["count"],"properties":{"count":{"type":"integer","minimum":1,"maximum":50},"balance_limit":{"type":["integer","null"],"maximum":1000000000000000,"minimum":0,"description":"msats each child may spend per `balance_limit_reset` period (null = the parent's balance)."},"balance_limit_reset":{"$ref":"openapi-components#/definitions/LimitReset"},"validity_date":{"type":["integer","null"],"maximum":253402300799,"minimum":0,"description":"Unix time in seconds after which the children stop working."}}};
const schema49 = {"type":["string","null"],"enum":["daily","weekly","monthly",null],"description":"Period after which a child key's spending against `balance_limit` starts again (null = never)."};

function validate37(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.count === undefined) && (missing0 = "count")){
validate37.errors = [{instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs1 = errors;
for(const key0 in data){
if(!((((key0 === "count") || (key0 === "balance_limit")) || (key0 === "balance_limit_reset")) || (key0 === "validity_date"))){
validate37.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.count !== undefined){
let data0 = data.count;
const _errs2 = errors;
if(!(((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0))) && (isFinite(data0)))){
validate37.errors = [{instancePath:instancePath+"/count",schemaPath:"#/properties/count/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs2){
if((typeof data0 == "number") && (isFinite(data0))){
if(data0 > 50 || isNaN(data0)){
validate37.errors = [{instancePath:instancePath+"/count",schemaPath:"#/properties/count/maximum",keyword:"maximum",params:{comparison: "<=", limit: 50},message:"must be <= 50"}];
return false;
}
else {
if(data0 < 1 || isNaN(data0)){
validate37.errors = [{instancePath:instancePath+"/count",schemaPath:"#/properties/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.balance_limit !== undefined){
let data1 = data.balance_limit;
const _errs4 = errors;
if((!(((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1))) && (isFinite(data1)))) && (data1 !== null)){
validate37.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"#/properties/balance_limit/type",keyword:"type",params:{type: schema48.properties.balance_limit.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs4){
if((typeof data1 == "number") && (isFinite(data1))){
if(data1 > 1000000000000000 || isNaN(data1)){
validate37.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"#/properties/balance_limit/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000000000},message:"must be <= 1000000000000000"}];
return false;
}
else {
if(data1 < 0 || isNaN(data1)){
validate37.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"#/properties/balance_limit/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid0 = _errs4 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.balance_limit_reset !== undefined){
let data2 = data.balance_limit_reset;
const _errs6 = errors;
if((typeof data2 !== "string") && (data2 !== null)){
validate37.errors = [{instancePath:instancePath+"/balance_limit_reset",schemaPath:"openapi-components#/definitions/LimitReset/type",keyword:"type",params:{type: schema49.type},message:"must be string,null"}];
return false;
}
if(!((((data2 === "daily") || (data2 === "weekly")) || (data2 === "monthly")) || (data2 === null))){
validate37.errors = [{instancePath:instancePath+"/balance_limit_reset",schemaPath:"openapi-components#/definitions/LimitReset/enum",keyword:"enum",params:{allowedValues: schema49.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid0 = _errs6 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.validity_date !== undefined){
let data3 = data.validity_date;
const _errs9 = errors;
if((!(((typeof data3 == "number") && (!(data3 % 1) && !isNaN(data3))) && (isFinite(data3)))) && (data3 !== null)){
validate37.errors = [{instancePath:instancePath+"/validity_date",schemaPath:"#/properties/validity_date/type",keyword:"type",params:{type: schema48.properties.validity_date.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs9){
if((typeof data3 == "number") && (isFinite(data3))){
if(data3 > 253402300799 || isNaN(data3)){
validate37.errors = [{instancePath:instancePath+"/validity_date",schemaPath:"#/properties/validity_date/maximum",keyword:"maximum",params:{comparison: "<=", limit: 253402300799},message:"must be <= 253402300799"}];
return false;
}
else {
if(data3 < 0 || isNaN(data3)){
validate37.errors = [{instancePath:instancePath+"/validity_date",schemaPath:"#/properties/validity_date/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid0 = _errs9 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
}
}
else {
validate37.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate37.errors = vErrors;
return errors === 0;
}


function validate36(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate37(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate37.errors : vErrors.concat(validate37.errors);
errors = vErrors.length;
}
validate36.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/create/lightning"] = validate39;
const schema50 = {"$ref":"openapi-components#/definitions/LightningCreateRequest"};
const schema51 = {"type":"object","additionalProperties":false,"required":["amount_sats"],"properties":{"amount_sats":{"type":"integer","maximum":1000000000,"minimum":1},"name":{"type":"string","maxLength":100}}};

function validate39(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.amount_sats === undefined) && (missing0 = "amount_sats")){
validate39.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningCreateRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!((key0 === "amount_sats") || (key0 === "name"))){
validate39.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningCreateRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.amount_sats !== undefined){
let data0 = data.amount_sats;
const _errs3 = errors;
if(!(((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0))) && (isFinite(data0)))){
validate39.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningCreateRequest/properties/amount_sats/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs3){
if((typeof data0 == "number") && (isFinite(data0))){
if(data0 > 1000000000 || isNaN(data0)){
validate39.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningCreateRequest/properties/amount_sats/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000},message:"must be <= 1000000000"}];
return false;
}
else {
if(data0 < 1 || isNaN(data0)){
validate39.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningCreateRequest/properties/amount_sats/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.name !== undefined){
let data1 = data.name;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 100){
validate39.errors = [{instancePath:instancePath+"/name",schemaPath:"openapi-components#/definitions/LightningCreateRequest/properties/name/maxLength",keyword:"maxLength",params:{limit: 100},message:"must NOT have more than 100 characters"}];
return false;
}
}
else {
validate39.errors = [{instancePath:instancePath+"/name",schemaPath:"openapi-components#/definitions/LightningCreateRequest/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
else {
validate39.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningCreateRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate39.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/topup/lightning"] = validate40;
const schema52 = {"$ref":"openapi-components#/definitions/LightningTopupRequest"};
const schema53 = {"type":"object","additionalProperties":false,"required":["amount_sats"],"properties":{"amount_sats":{"type":"integer","maximum":1000000000,"minimum":1}}};

function validate40(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.amount_sats === undefined) && (missing0 = "amount_sats")){
validate40.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningTopupRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "amount_sats")){
validate40.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningTopupRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.amount_sats !== undefined){
let data0 = data.amount_sats;
const _errs3 = errors;
if(!(((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0))) && (isFinite(data0)))){
validate40.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningTopupRequest/properties/amount_sats/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs3){
if((typeof data0 == "number") && (isFinite(data0))){
if(data0 > 1000000000 || isNaN(data0)){
validate40.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningTopupRequest/properties/amount_sats/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000},message:"must be <= 1000000000"}];
return false;
}
else {
if(data0 < 1 || isNaN(data0)){
validate40.errors = [{instancePath:instancePath+"/amount_sats",schemaPath:"openapi-components#/definitions/LightningTopupRequest/properties/amount_sats/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
}
}
}
}
else {
validate40.errors = [{instancePath,schemaPath:"openapi-components#/definitions/LightningTopupRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate40.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/create/subkey"] = validate41;
const schema54 = {"$ref":"openapi-components#/definitions/SubkeyRequest"};
const schema55 = {"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","minLength":1,"maxLength":100},"balance_limit":{"type":["integer","null"],"maximum":1000000000000000,"minimum":0,"description":"msats the sub-key may spend in total (null = the parent's balance)."},"allowed_models":{"type":["array","null"],"maxItems":1000,"items":{"type":"string","minLength":1}},"expires_in_hours":{"type":["integer","null"],"minimum":1,"maximum":876000}}};

function validate41(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs2 = errors;
for(const key0 in data){
if(!((((key0 === "name") || (key0 === "balance_limit")) || (key0 === "allowed_models")) || (key0 === "expires_in_hours"))){
validate41.errors = [{instancePath,schemaPath:"openapi-components#/definitions/SubkeyRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.name !== undefined){
let data0 = data.name;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 100){
validate41.errors = [{instancePath:instancePath+"/name",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/name/maxLength",keyword:"maxLength",params:{limit: 100},message:"must NOT have more than 100 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate41.errors = [{instancePath:instancePath+"/name",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/name/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate41.errors = [{instancePath:instancePath+"/name",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.balance_limit !== undefined){
let data1 = data.balance_limit;
const _errs5 = errors;
if((!(((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1))) && (isFinite(data1)))) && (data1 !== null)){
validate41.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/balance_limit/type",keyword:"type",params:{type: schema55.properties.balance_limit.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs5){
if((typeof data1 == "number") && (isFinite(data1))){
if(data1 > 1000000000000000 || isNaN(data1)){
validate41.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/balance_limit/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000000000},message:"must be <= 1000000000000000"}];
return false;
}
else {
if(data1 < 0 || isNaN(data1)){
validate41.errors = [{instancePath:instancePath+"/balance_limit",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/balance_limit/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.allowed_models !== undefined){
let data2 = data.allowed_models;
const _errs7 = errors;
if((!(Array.isArray(data2))) && (data2 !== null)){
validate41.errors = [{instancePath:instancePath+"/allowed_models",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/allowed_models/type",keyword:"type",params:{type: schema55.properties.allowed_models.type},message:"must be array,null"}];
return false;
}
if(errors === _errs7){
if(Array.isArray(data2)){
if(data2.length > 1000){
validate41.errors = [{instancePath:instancePath+"/allowed_models",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/allowed_models/maxItems",keyword:"maxItems",params:{limit: 1000},message:"must NOT have more than 1000 items"}];
return false;
}
else {
var valid2 = true;
const len0 = data2.length;
for(let i0=0; i0<len0; i0++){
let data3 = data2[i0];
const _errs9 = errors;
if(errors === _errs9){
if(typeof data3 === "string"){
if(func2(data3) < 1){
validate41.errors = [{instancePath:instancePath+"/allowed_models/" + i0,schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/allowed_models/items/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
else {
validate41.errors = [{instancePath:instancePath+"/allowed_models/" + i0,schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/allowed_models/items/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid2 = _errs9 === errors;
if(!valid2){
break;
}
}
}
}
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.expires_in_hours !== undefined){
let data4 = data.expires_in_hours;
const _errs11 = errors;
if((!(((typeof data4 == "number") && (!(data4 % 1) && !isNaN(data4))) && (isFinite(data4)))) && (data4 !== null)){
validate41.errors = [{instancePath:instancePath+"/expires_in_hours",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/expires_in_hours/type",keyword:"type",params:{type: schema55.properties.expires_in_hours.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs11){
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 876000 || isNaN(data4)){
validate41.errors = [{instancePath:instancePath+"/expires_in_hours",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/expires_in_hours/maximum",keyword:"maximum",params:{comparison: "<=", limit: 876000},message:"must be <= 876000"}];
return false;
}
else {
if(data4 < 1 || isNaN(data4)){
validate41.errors = [{instancePath:instancePath+"/expires_in_hours",schemaPath:"openapi-components#/definitions/SubkeyRequest/properties/expires_in_hours/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid1 = _errs11 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
else {
validate41.errors = [{instancePath,schemaPath:"openapi-components#/definitions/SubkeyRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate41.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/update"] = validate42;
const schema56 = {"$ref":"openapi-components#/definitions/WalletUpdateRequest"};
const schema57 = {"type":"object","additionalProperties":false,"minProperties":1,"properties":{"allowed_ips":{"type":"array","maxItems":100,"items":{"$ref":"openapi-components#/definitions/IpOrCidr"}},"refund_address":{"type":["string","null"],"minLength":3,"maxLength":320,"description":"A Lightning address `name@host`; null clears it."}}};
const schema58 = {"type":"string","description":"An IPv4 or IPv6 address, or a CIDR range.","minLength":2,"maxLength":49,"pattern":"^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$"};
const pattern4 = new RegExp("^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$", "u");

function validate43(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
if(Object.keys(data).length < 1){
validate43.errors = [{instancePath,schemaPath:"#/minProperties",keyword:"minProperties",params:{limit: 1},message:"must NOT have fewer than 1 properties"}];
return false;
}
else {
const _errs1 = errors;
for(const key0 in data){
if(!((key0 === "allowed_ips") || (key0 === "refund_address"))){
validate43.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.allowed_ips !== undefined){
let data0 = data.allowed_ips;
const _errs2 = errors;
if(errors === _errs2){
if(Array.isArray(data0)){
if(data0.length > 100){
validate43.errors = [{instancePath:instancePath+"/allowed_ips",schemaPath:"#/properties/allowed_ips/maxItems",keyword:"maxItems",params:{limit: 100},message:"must NOT have more than 100 items"}];
return false;
}
else {
var valid1 = true;
const len0 = data0.length;
for(let i0=0; i0<len0; i0++){
let data1 = data0[i0];
const _errs4 = errors;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 49){
validate43.errors = [{instancePath:instancePath+"/allowed_ips/" + i0,schemaPath:"openapi-components#/definitions/IpOrCidr/maxLength",keyword:"maxLength",params:{limit: 49},message:"must NOT have more than 49 characters"}];
return false;
}
else {
if(func2(data1) < 2){
validate43.errors = [{instancePath:instancePath+"/allowed_ips/" + i0,schemaPath:"openapi-components#/definitions/IpOrCidr/minLength",keyword:"minLength",params:{limit: 2},message:"must NOT have fewer than 2 characters"}];
return false;
}
else {
if(!pattern4.test(data1)){
validate43.errors = [{instancePath:instancePath+"/allowed_ips/" + i0,schemaPath:"openapi-components#/definitions/IpOrCidr/pattern",keyword:"pattern",params:{pattern: "^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$"},message:"must match pattern \""+"^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$"+"\""}];
return false;
}
}
}
}
else {
validate43.errors = [{instancePath:instancePath+"/allowed_ips/" + i0,schemaPath:"openapi-components#/definitions/IpOrCidr/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs4 === errors;
if(!valid1){
break;
}
}
}
}
else {
validate43.errors = [{instancePath:instancePath+"/allowed_ips",schemaPath:"#/properties/allowed_ips/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.refund_address !== undefined){
let data2 = data.refund_address;
const _errs7 = errors;
if((typeof data2 !== "string") && (data2 !== null)){
validate43.errors = [{instancePath:instancePath+"/refund_address",schemaPath:"#/properties/refund_address/type",keyword:"type",params:{type: schema57.properties.refund_address.type},message:"must be string,null"}];
return false;
}
if(errors === _errs7){
if(typeof data2 === "string"){
if(func2(data2) > 320){
validate43.errors = [{instancePath:instancePath+"/refund_address",schemaPath:"#/properties/refund_address/maxLength",keyword:"maxLength",params:{limit: 320},message:"must NOT have more than 320 characters"}];
return false;
}
else {
if(func2(data2) < 3){
validate43.errors = [{instancePath:instancePath+"/refund_address",schemaPath:"#/properties/refund_address/minLength",keyword:"minLength",params:{limit: 3},message:"must NOT have fewer than 3 characters"}];
return false;
}
}
}
}
var valid0 = _errs7 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
else {
validate43.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate43.errors = vErrors;
return errors === 0;
}


function validate42(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate43(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate43.errors : vErrors.concat(validate43.errors);
errors = vErrors.length;
}
validate42.errors = vErrors;
return errors === 0;
}

exports["POST /v1/wallet/alerts"] = validate45;
const schema59 = {"$ref":"openapi-components#/definitions/WalletAlertsRequest"};
const schema60 = {"type":"object","additionalProperties":false,"properties":{"low_balance_threshold":{"type":["integer","null"],"maximum":1000000000000000,"minimum":0,"description":"msats; null = off."},"daily_spend_limit":{"type":["integer","null"],"maximum":1000000000000000,"minimum":0,"description":"msats per UTC day; null = off. An alert, not a block."},"webhook_url":{"type":["string","null"],"format":"uri","maxLength":2000}}};

function validate45(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs2 = errors;
for(const key0 in data){
if(!(((key0 === "low_balance_threshold") || (key0 === "daily_spend_limit")) || (key0 === "webhook_url"))){
validate45.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WalletAlertsRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.low_balance_threshold !== undefined){
let data0 = data.low_balance_threshold;
const _errs3 = errors;
if((!(((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0))) && (isFinite(data0)))) && (data0 !== null)){
validate45.errors = [{instancePath:instancePath+"/low_balance_threshold",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/low_balance_threshold/type",keyword:"type",params:{type: schema60.properties.low_balance_threshold.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs3){
if((typeof data0 == "number") && (isFinite(data0))){
if(data0 > 1000000000000000 || isNaN(data0)){
validate45.errors = [{instancePath:instancePath+"/low_balance_threshold",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/low_balance_threshold/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000000000},message:"must be <= 1000000000000000"}];
return false;
}
else {
if(data0 < 0 || isNaN(data0)){
validate45.errors = [{instancePath:instancePath+"/low_balance_threshold",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/low_balance_threshold/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.daily_spend_limit !== undefined){
let data1 = data.daily_spend_limit;
const _errs5 = errors;
if((!(((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1))) && (isFinite(data1)))) && (data1 !== null)){
validate45.errors = [{instancePath:instancePath+"/daily_spend_limit",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/daily_spend_limit/type",keyword:"type",params:{type: schema60.properties.daily_spend_limit.type},message:"must be integer,null"}];
return false;
}
if(errors === _errs5){
if((typeof data1 == "number") && (isFinite(data1))){
if(data1 > 1000000000000000 || isNaN(data1)){
validate45.errors = [{instancePath:instancePath+"/daily_spend_limit",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/daily_spend_limit/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000000000},message:"must be <= 1000000000000000"}];
return false;
}
else {
if(data1 < 0 || isNaN(data1)){
validate45.errors = [{instancePath:instancePath+"/daily_spend_limit",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/daily_spend_limit/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.webhook_url !== undefined){
let data2 = data.webhook_url;
const _errs7 = errors;
if((typeof data2 !== "string") && (data2 !== null)){
validate45.errors = [{instancePath:instancePath+"/webhook_url",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/webhook_url/type",keyword:"type",params:{type: schema60.properties.webhook_url.type},message:"must be string,null"}];
return false;
}
if(errors === _errs7){
if(errors === _errs7){
if(typeof data2 === "string"){
if(func2(data2) > 2000){
validate45.errors = [{instancePath:instancePath+"/webhook_url",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/webhook_url/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters"}];
return false;
}
else {
if(!(formats0(data2))){
validate45.errors = [{instancePath:instancePath+"/webhook_url",schemaPath:"openapi-components#/definitions/WalletAlertsRequest/properties/webhook_url/format",keyword:"format",params:{format: "uri"},message:"must match format \""+"uri"+"\""}];
return false;
}
}
}
}
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
else {
validate45.errors = [{instancePath,schemaPath:"openapi-components#/definitions/WalletAlertsRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate45.errors = vErrors;
return errors === 0;
}

exports["POST /v1/webhooks"] = validate46;
const schema61 = {"$ref":"openapi-components#/definitions/WebhookRequest"};
const schema62 = {"type":"object","additionalProperties":false,"required":["url","events","secret"],"properties":{"url":{"type":"string","format":"uri","maxLength":2000},"events":{"type":"array","minItems":1,"maxItems":4,"items":{"$ref":"openapi-components#/definitions/WebhookEventType"}},"secret":{"type":"string","description":"A Standard Webhooks secret (`whsec_` + base64 of at least 16 bytes). Never returned.","minLength":28,"maxLength":200,"pattern":"^whsec_[A-Za-z0-9+/]+={0,2}$"}}};
const schema63 = {"type":"string","enum":["balance.low","key.expired","spend.daily_limit","batch.completed"]};
const pattern5 = new RegExp("^whsec_[A-Za-z0-9+/]+={0,2}$", "u");

function validate47(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(errors === 0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((((data.url === undefined) && (missing0 = "url")) || ((data.events === undefined) && (missing0 = "events"))) || ((data.secret === undefined) && (missing0 = "secret"))){
validate47.errors = [{instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs1 = errors;
for(const key0 in data){
if(!(((key0 === "url") || (key0 === "events")) || (key0 === "secret"))){
validate47.errors = [{instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs1 === errors){
if(data.url !== undefined){
let data0 = data.url;
const _errs2 = errors;
if(errors === _errs2){
if(errors === _errs2){
if(typeof data0 === "string"){
if(func2(data0) > 2000){
validate47.errors = [{instancePath:instancePath+"/url",schemaPath:"#/properties/url/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters"}];
return false;
}
else {
if(!(formats0(data0))){
validate47.errors = [{instancePath:instancePath+"/url",schemaPath:"#/properties/url/format",keyword:"format",params:{format: "uri"},message:"must match format \""+"uri"+"\""}];
return false;
}
}
}
else {
validate47.errors = [{instancePath:instancePath+"/url",schemaPath:"#/properties/url/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
var valid0 = _errs2 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.events !== undefined){
let data1 = data.events;
const _errs4 = errors;
if(errors === _errs4){
if(Array.isArray(data1)){
if(data1.length > 4){
validate47.errors = [{instancePath:instancePath+"/events",schemaPath:"#/properties/events/maxItems",keyword:"maxItems",params:{limit: 4},message:"must NOT have more than 4 items"}];
return false;
}
else {
if(data1.length < 1){
validate47.errors = [{instancePath:instancePath+"/events",schemaPath:"#/properties/events/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"}];
return false;
}
else {
var valid1 = true;
const len0 = data1.length;
for(let i0=0; i0<len0; i0++){
let data2 = data1[i0];
const _errs6 = errors;
if(typeof data2 !== "string"){
validate47.errors = [{instancePath:instancePath+"/events/" + i0,schemaPath:"openapi-components#/definitions/WebhookEventType/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
if(!((((data2 === "balance.low") || (data2 === "key.expired")) || (data2 === "spend.daily_limit")) || (data2 === "batch.completed"))){
validate47.errors = [{instancePath:instancePath+"/events/" + i0,schemaPath:"openapi-components#/definitions/WebhookEventType/enum",keyword:"enum",params:{allowedValues: schema63.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs6 === errors;
if(!valid1){
break;
}
}
}
}
}
else {
validate47.errors = [{instancePath:instancePath+"/events",schemaPath:"#/properties/events/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid0 = _errs4 === errors;
}
else {
var valid0 = true;
}
if(valid0){
if(data.secret !== undefined){
let data3 = data.secret;
const _errs9 = errors;
if(errors === _errs9){
if(typeof data3 === "string"){
if(func2(data3) > 200){
validate47.errors = [{instancePath:instancePath+"/secret",schemaPath:"#/properties/secret/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"}];
return false;
}
else {
if(func2(data3) < 28){
validate47.errors = [{instancePath:instancePath+"/secret",schemaPath:"#/properties/secret/minLength",keyword:"minLength",params:{limit: 28},message:"must NOT have fewer than 28 characters"}];
return false;
}
else {
if(!pattern5.test(data3)){
validate47.errors = [{instancePath:instancePath+"/secret",schemaPath:"#/properties/secret/pattern",keyword:"pattern",params:{pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$"},message:"must match pattern \""+"^whsec_[A-Za-z0-9+/]+={0,2}$"+"\""}];
return false;
}
}
}
}
else {
validate47.errors = [{instancePath:instancePath+"/secret",schemaPath:"#/properties/secret/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid0 = _errs9 === errors;
}
else {
var valid0 = true;
}
}
}
}
}
}
else {
validate47.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate47.errors = vErrors;
return errors === 0;
}


function validate46(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
if(!(validate47(data, {instancePath,parentData,parentDataProperty,rootData}))){
vErrors = vErrors === null ? validate47.errors : vErrors.concat(validate47.errors);
errors = vErrors.length;
}
validate46.errors = vErrors;
return errors === 0;
}

exports["PATCH /admin/api/settings"] = validate49;
const schema64 = {"$ref":"openapi-components#/definitions/AdminSettingsPatch"};
const schema65 = {"description":"Any subset of the settings; unknown fields are refused. Only the `runtime_changeable` ones may\nchange (pricing numbers, `child_key_cost_msats`, node name/description/npub); `upstream_base_url`,\n`upstream_api_key` and `cashu_mints` are accepted only unchanged (`\"[redacted]\"` keeps the key),\notherwise 400: they need a restart.\n","type":"object","additionalProperties":false,"minProperties":1,"properties":{"upstream_base_url":{"type":"string","format":"uri"},"upstream_api_key":{"type":["string","null"],"minLength":1},"fixed_pricing":{"type":"boolean"},"fixed_cost_per_request":{"type":"number","maximum":1000000000,"minimum":0},"fixed_per_1k_input_tokens":{"type":["number","null"],"maximum":1000000000,"minimum":0},"fixed_per_1k_output_tokens":{"type":["number","null"],"maximum":1000000000,"minimum":0},"exchange_fee":{"type":"number","minimum":0,"maximum":10},"upstream_provider_fee":{"type":"number","minimum":0,"maximum":10},"child_key_cost_msats":{"type":"integer","maximum":1000000000000000,"minimum":0},"node_name":{"type":"string","maxLength":200},"node_description":{"type":"string","maxLength":2000},"node_npub":{"type":"string","maxLength":200},"cashu_mints":{"type":"array","minItems":1,"items":{"type":"string","format":"uri"}}}};
const func42 = Object.prototype.hasOwnProperty;

function validate49(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
if(Object.keys(data).length < 1){
validate49.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminSettingsPatch/minProperties",keyword:"minProperties",params:{limit: 1},message:"must NOT have fewer than 1 properties"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(func42.call(schema65.properties, key0))){
validate49.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminSettingsPatch/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.upstream_base_url !== undefined){
let data0 = data.upstream_base_url;
const _errs3 = errors;
if(errors === _errs3){
if(errors === _errs3){
if(typeof data0 === "string"){
if(!(formats0(data0))){
validate49.errors = [{instancePath:instancePath+"/upstream_base_url",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_base_url/format",keyword:"format",params:{format: "uri"},message:"must match format \""+"uri"+"\""}];
return false;
}
}
else {
validate49.errors = [{instancePath:instancePath+"/upstream_base_url",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_base_url/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.upstream_api_key !== undefined){
let data1 = data.upstream_api_key;
const _errs5 = errors;
if((typeof data1 !== "string") && (data1 !== null)){
validate49.errors = [{instancePath:instancePath+"/upstream_api_key",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_api_key/type",keyword:"type",params:{type: schema65.properties.upstream_api_key.type},message:"must be string,null"}];
return false;
}
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) < 1){
validate49.errors = [{instancePath:instancePath+"/upstream_api_key",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_api_key/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.fixed_pricing !== undefined){
const _errs7 = errors;
if(typeof data.fixed_pricing !== "boolean"){
validate49.errors = [{instancePath:instancePath+"/fixed_pricing",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_pricing/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.fixed_cost_per_request !== undefined){
let data3 = data.fixed_cost_per_request;
const _errs9 = errors;
if(errors === _errs9){
if((typeof data3 == "number") && (isFinite(data3))){
if(data3 > 1000000000 || isNaN(data3)){
validate49.errors = [{instancePath:instancePath+"/fixed_cost_per_request",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_cost_per_request/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000},message:"must be <= 1000000000"}];
return false;
}
else {
if(data3 < 0 || isNaN(data3)){
validate49.errors = [{instancePath:instancePath+"/fixed_cost_per_request",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_cost_per_request/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
else {
validate49.errors = [{instancePath:instancePath+"/fixed_cost_per_request",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_cost_per_request/type",keyword:"type",params:{type: "number"},message:"must be number"}];
return false;
}
}
var valid1 = _errs9 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.fixed_per_1k_input_tokens !== undefined){
let data4 = data.fixed_per_1k_input_tokens;
const _errs11 = errors;
if((!((typeof data4 == "number") && (isFinite(data4)))) && (data4 !== null)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_input_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_input_tokens/type",keyword:"type",params:{type: schema65.properties.fixed_per_1k_input_tokens.type},message:"must be number,null"}];
return false;
}
if(errors === _errs11){
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 1000000000 || isNaN(data4)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_input_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_input_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000},message:"must be <= 1000000000"}];
return false;
}
else {
if(data4 < 0 || isNaN(data4)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_input_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_input_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs11 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.fixed_per_1k_output_tokens !== undefined){
let data5 = data.fixed_per_1k_output_tokens;
const _errs13 = errors;
if((!((typeof data5 == "number") && (isFinite(data5)))) && (data5 !== null)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_output_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_output_tokens/type",keyword:"type",params:{type: schema65.properties.fixed_per_1k_output_tokens.type},message:"must be number,null"}];
return false;
}
if(errors === _errs13){
if((typeof data5 == "number") && (isFinite(data5))){
if(data5 > 1000000000 || isNaN(data5)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_output_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_output_tokens/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000},message:"must be <= 1000000000"}];
return false;
}
else {
if(data5 < 0 || isNaN(data5)){
validate49.errors = [{instancePath:instancePath+"/fixed_per_1k_output_tokens",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/fixed_per_1k_output_tokens/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs13 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.exchange_fee !== undefined){
let data6 = data.exchange_fee;
const _errs15 = errors;
if(errors === _errs15){
if((typeof data6 == "number") && (isFinite(data6))){
if(data6 > 10 || isNaN(data6)){
validate49.errors = [{instancePath:instancePath+"/exchange_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/exchange_fee/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10},message:"must be <= 10"}];
return false;
}
else {
if(data6 < 0 || isNaN(data6)){
validate49.errors = [{instancePath:instancePath+"/exchange_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/exchange_fee/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
else {
validate49.errors = [{instancePath:instancePath+"/exchange_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/exchange_fee/type",keyword:"type",params:{type: "number"},message:"must be number"}];
return false;
}
}
var valid1 = _errs15 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.upstream_provider_fee !== undefined){
let data7 = data.upstream_provider_fee;
const _errs17 = errors;
if(errors === _errs17){
if((typeof data7 == "number") && (isFinite(data7))){
if(data7 > 10 || isNaN(data7)){
validate49.errors = [{instancePath:instancePath+"/upstream_provider_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_provider_fee/maximum",keyword:"maximum",params:{comparison: "<=", limit: 10},message:"must be <= 10"}];
return false;
}
else {
if(data7 < 0 || isNaN(data7)){
validate49.errors = [{instancePath:instancePath+"/upstream_provider_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_provider_fee/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
else {
validate49.errors = [{instancePath:instancePath+"/upstream_provider_fee",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/upstream_provider_fee/type",keyword:"type",params:{type: "number"},message:"must be number"}];
return false;
}
}
var valid1 = _errs17 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.child_key_cost_msats !== undefined){
let data8 = data.child_key_cost_msats;
const _errs19 = errors;
if(!(((typeof data8 == "number") && (!(data8 % 1) && !isNaN(data8))) && (isFinite(data8)))){
validate49.errors = [{instancePath:instancePath+"/child_key_cost_msats",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/child_key_cost_msats/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs19){
if((typeof data8 == "number") && (isFinite(data8))){
if(data8 > 1000000000000000 || isNaN(data8)){
validate49.errors = [{instancePath:instancePath+"/child_key_cost_msats",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/child_key_cost_msats/maximum",keyword:"maximum",params:{comparison: "<=", limit: 1000000000000000},message:"must be <= 1000000000000000"}];
return false;
}
else {
if(data8 < 0 || isNaN(data8)){
validate49.errors = [{instancePath:instancePath+"/child_key_cost_msats",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/child_key_cost_msats/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0"}];
return false;
}
}
}
}
var valid1 = _errs19 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.node_name !== undefined){
let data9 = data.node_name;
const _errs21 = errors;
if(errors === _errs21){
if(typeof data9 === "string"){
if(func2(data9) > 200){
validate49.errors = [{instancePath:instancePath+"/node_name",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_name/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"}];
return false;
}
}
else {
validate49.errors = [{instancePath:instancePath+"/node_name",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_name/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs21 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.node_description !== undefined){
let data10 = data.node_description;
const _errs23 = errors;
if(errors === _errs23){
if(typeof data10 === "string"){
if(func2(data10) > 2000){
validate49.errors = [{instancePath:instancePath+"/node_description",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_description/maxLength",keyword:"maxLength",params:{limit: 2000},message:"must NOT have more than 2000 characters"}];
return false;
}
}
else {
validate49.errors = [{instancePath:instancePath+"/node_description",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_description/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs23 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.node_npub !== undefined){
let data11 = data.node_npub;
const _errs25 = errors;
if(errors === _errs25){
if(typeof data11 === "string"){
if(func2(data11) > 200){
validate49.errors = [{instancePath:instancePath+"/node_npub",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_npub/maxLength",keyword:"maxLength",params:{limit: 200},message:"must NOT have more than 200 characters"}];
return false;
}
}
else {
validate49.errors = [{instancePath:instancePath+"/node_npub",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/node_npub/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs25 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.cashu_mints !== undefined){
let data12 = data.cashu_mints;
const _errs27 = errors;
if(errors === _errs27){
if(Array.isArray(data12)){
if(data12.length < 1){
validate49.errors = [{instancePath:instancePath+"/cashu_mints",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/cashu_mints/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items"}];
return false;
}
else {
var valid2 = true;
const len0 = data12.length;
for(let i0=0; i0<len0; i0++){
let data13 = data12[i0];
const _errs29 = errors;
if(errors === _errs29){
if(errors === _errs29){
if(typeof data13 === "string"){
if(!(formats0(data13))){
validate49.errors = [{instancePath:instancePath+"/cashu_mints/" + i0,schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/cashu_mints/items/format",keyword:"format",params:{format: "uri"},message:"must match format \""+"uri"+"\""}];
return false;
}
}
else {
validate49.errors = [{instancePath:instancePath+"/cashu_mints/" + i0,schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/cashu_mints/items/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
var valid2 = _errs29 === errors;
if(!valid2){
break;
}
}
}
}
else {
validate49.errors = [{instancePath:instancePath+"/cashu_mints",schemaPath:"openapi-components#/definitions/AdminSettingsPatch/properties/cashu_mints/type",keyword:"type",params:{type: "array"},message:"must be array"}];
return false;
}
}
var valid1 = _errs27 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
else {
validate49.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminSettingsPatch/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate49.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/network/publish"] = validate50;
const schema66 = {"$ref":"openapi-components#/definitions/AdminConfirm"};
const schema67 = {"type":"object","additionalProperties":false,"required":["confirm"],"properties":{"confirm":{"type":"boolean","enum":[true],"description":"Must be true (the console asks the operator first)."}}};

function validate50(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.confirm === undefined) && (missing0 = "confirm")){
validate50.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "confirm")){
validate50.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.confirm !== undefined){
let data0 = data.confirm;
if(typeof data0 !== "boolean"){
validate50.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
if(!(data0 === true)){
validate50.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/enum",keyword:"enum",params:{allowedValues: schema67.properties.confirm.enum},message:"must be equal to one of the allowed values"}];
return false;
}
}
}
}
}
else {
validate50.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate50.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/keys/lookup"] = validate51;
const schema68 = {"$ref":"openapi-components#/definitions/AdminKeyLookup"};
const schema69 = {"type":"object","description":"Exactly one of `api_key` (the key itself) and `key_id` (its public id, as audit records, transactions, logs and the other admin answers show it).","additionalProperties":false,"oneOf":[{"required":["api_key"]},{"required":["key_id"]}],"properties":{"api_key":{"type":"string","minLength":4,"maxLength":256,"pattern":"^sk-"},"key_id":{"type":"string","pattern":"^[0-9a-f]{16}$","description":"A key's public id (16 lowercase hex characters)."},"limit":{"type":"integer","minimum":1,"maximum":100,"default":20,"description":"How many transactions and audit records (newest first)."}}};
const pattern6 = new RegExp("^sk-", "u");
const pattern7 = new RegExp("^[0-9a-f]{16}$", "u");

function validate51(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
const _errs2 = errors;
let valid1 = false;
let passing0 = null;
const _errs3 = errors;
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.api_key === undefined) && (missing0 = "api_key")){
const err0 = {instancePath,schemaPath:"openapi-components#/definitions/AdminKeyLookup/oneOf/0/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
}
var _valid0 = _errs3 === errors;
if(_valid0){
valid1 = true;
passing0 = 0;
}
const _errs4 = errors;
if(data && typeof data == "object" && !Array.isArray(data)){
let missing1;
if((data.key_id === undefined) && (missing1 = "key_id")){
const err1 = {instancePath,schemaPath:"openapi-components#/definitions/AdminKeyLookup/oneOf/1/required",keyword:"required",params:{missingProperty: missing1},message:"must have required property '"+missing1+"'"};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
var _valid0 = _errs4 === errors;
if(_valid0 && valid1){
valid1 = false;
passing0 = [passing0, 1];
}
else {
if(_valid0){
valid1 = true;
passing0 = 1;
}
}
if(!valid1){
const err2 = {instancePath,schemaPath:"openapi-components#/definitions/AdminKeyLookup/oneOf",keyword:"oneOf",params:{passingSchemas: passing0},message:"must match exactly one schema in oneOf"};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
validate51.errors = vErrors;
return false;
}
else {
errors = _errs2;
if(vErrors !== null){
if(_errs2){
vErrors.length = _errs2;
}
else {
vErrors = null;
}
}
}
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
const _errs5 = errors;
for(const key0 in data){
if(!(((key0 === "api_key") || (key0 === "key_id")) || (key0 === "limit"))){
validate51.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminKeyLookup/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs5 === errors){
if(data.api_key !== undefined){
let data0 = data.api_key;
const _errs6 = errors;
if(errors === _errs6){
if(typeof data0 === "string"){
if(func2(data0) > 256){
validate51.errors = [{instancePath:instancePath+"/api_key",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/api_key/maxLength",keyword:"maxLength",params:{limit: 256},message:"must NOT have more than 256 characters"}];
return false;
}
else {
if(func2(data0) < 4){
validate51.errors = [{instancePath:instancePath+"/api_key",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/api_key/minLength",keyword:"minLength",params:{limit: 4},message:"must NOT have fewer than 4 characters"}];
return false;
}
else {
if(!pattern6.test(data0)){
validate51.errors = [{instancePath:instancePath+"/api_key",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/api_key/pattern",keyword:"pattern",params:{pattern: "^sk-"},message:"must match pattern \""+"^sk-"+"\""}];
return false;
}
}
}
}
else {
validate51.errors = [{instancePath:instancePath+"/api_key",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/api_key/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid2 = _errs6 === errors;
}
else {
var valid2 = true;
}
if(valid2){
if(data.key_id !== undefined){
let data1 = data.key_id;
const _errs8 = errors;
if(errors === _errs8){
if(typeof data1 === "string"){
if(!pattern7.test(data1)){
validate51.errors = [{instancePath:instancePath+"/key_id",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/key_id/pattern",keyword:"pattern",params:{pattern: "^[0-9a-f]{16}$"},message:"must match pattern \""+"^[0-9a-f]{16}$"+"\""}];
return false;
}
}
else {
validate51.errors = [{instancePath:instancePath+"/key_id",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/key_id/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid2 = _errs8 === errors;
}
else {
var valid2 = true;
}
if(valid2){
if(data.limit !== undefined){
let data2 = data.limit;
const _errs10 = errors;
if(!(((typeof data2 == "number") && (!(data2 % 1) && !isNaN(data2))) && (isFinite(data2)))){
validate51.errors = [{instancePath:instancePath+"/limit",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/limit/type",keyword:"type",params:{type: "integer"},message:"must be integer"}];
return false;
}
if(errors === _errs10){
if((typeof data2 == "number") && (isFinite(data2))){
if(data2 > 100 || isNaN(data2)){
validate51.errors = [{instancePath:instancePath+"/limit",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/limit/maximum",keyword:"maximum",params:{comparison: "<=", limit: 100},message:"must be <= 100"}];
return false;
}
else {
if(data2 < 1 || isNaN(data2)){
validate51.errors = [{instancePath:instancePath+"/limit",schemaPath:"openapi-components#/definitions/AdminKeyLookup/properties/limit/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1"}];
return false;
}
}
}
}
var valid2 = _errs10 === errors;
}
else {
var valid2 = true;
}
}
}
}
}
else {
validate51.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminKeyLookup/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate51.errors = vErrors;
return errors === 0;
}

exports["POST /admin/login"] = validate52;
const schema70 = {"$ref":"openapi-components#/definitions/AdminLogin"};
const schema71 = {"type":"object","additionalProperties":false,"required":["password"],"properties":{"password":{"type":"string","minLength":1,"maxLength":1024}}};

function validate52(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.password === undefined) && (missing0 = "password")){
validate52.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminLogin/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "password")){
validate52.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminLogin/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.password !== undefined){
let data0 = data.password;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 1024){
validate52.errors = [{instancePath:instancePath+"/password",schemaPath:"openapi-components#/definitions/AdminLogin/properties/password/maxLength",keyword:"maxLength",params:{limit: 1024},message:"must NOT have more than 1024 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate52.errors = [{instancePath:instancePath+"/password",schemaPath:"openapi-components#/definitions/AdminLogin/properties/password/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate52.errors = [{instancePath:instancePath+"/password",schemaPath:"openapi-components#/definitions/AdminLogin/properties/password/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
}
}
else {
validate52.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminLogin/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate52.errors = vErrors;
return errors === 0;
}

exports["PATCH /admin/api/keys/{key_id}"] = validate53;
const schema72 = {"$ref":"openapi-components#/definitions/AdminKeyPatch"};
const schema73 = {"type":"object","additionalProperties":false,"required":["disabled"],"properties":{"disabled":{"type":"boolean"}}};

function validate53(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.disabled === undefined) && (missing0 = "disabled")){
validate53.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminKeyPatch/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "disabled")){
validate53.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminKeyPatch/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.disabled !== undefined){
if(typeof data.disabled !== "boolean"){
validate53.errors = [{instancePath:instancePath+"/disabled",schemaPath:"openapi-components#/definitions/AdminKeyPatch/properties/disabled/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
}
}
}
}
else {
validate53.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminKeyPatch/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate53.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/actions/recovery"] = validate54;
const schema74 = {"$ref":"openapi-components#/definitions/AdminConfirm"};

function validate54(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.confirm === undefined) && (missing0 = "confirm")){
validate54.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "confirm")){
validate54.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.confirm !== undefined){
let data0 = data.confirm;
if(typeof data0 !== "boolean"){
validate54.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
if(!(data0 === true)){
validate54.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/enum",keyword:"enum",params:{allowedValues: schema67.properties.confirm.enum},message:"must be equal to one of the allowed values"}];
return false;
}
}
}
}
}
else {
validate54.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate54.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/actions/solvency-check"] = validate55;
const schema76 = {"$ref":"openapi-components#/definitions/AdminConfirm"};

function validate55(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.confirm === undefined) && (missing0 = "confirm")){
validate55.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "confirm")){
validate55.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.confirm !== undefined){
let data0 = data.confirm;
if(typeof data0 !== "boolean"){
validate55.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
if(!(data0 === true)){
validate55.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminConfirm/properties/confirm/enum",keyword:"enum",params:{allowedValues: schema67.properties.confirm.enum},message:"must be equal to one of the allowed values"}];
return false;
}
}
}
}
}
else {
validate55.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminConfirm/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate55.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/actions/payout"] = validate56;
const schema78 = {"$ref":"openapi-components#/definitions/AdminPayoutRequest"};
const schema79 = {"type":"object","additionalProperties":false,"required":["confirm","invoice"],"properties":{"confirm":{"type":"boolean","enum":[true]},"invoice":{"type":"string","minLength":1,"maxLength":4096,"description":"A BOLT11 invoice with an amount."},"mint":{"type":"string","description":"One of CASHU_MINTS; default the primary mint."}}};

function validate56(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if(((data.confirm === undefined) && (missing0 = "confirm")) || ((data.invoice === undefined) && (missing0 = "invoice"))){
validate56.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(((key0 === "confirm") || (key0 === "invoice")) || (key0 === "mint"))){
validate56.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.confirm !== undefined){
let data0 = data.confirm;
const _errs3 = errors;
if(typeof data0 !== "boolean"){
validate56.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/confirm/type",keyword:"type",params:{type: "boolean"},message:"must be boolean"}];
return false;
}
if(!(data0 === true)){
validate56.errors = [{instancePath:instancePath+"/confirm",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/confirm/enum",keyword:"enum",params:{allowedValues: schema79.properties.confirm.enum},message:"must be equal to one of the allowed values"}];
return false;
}
var valid1 = _errs3 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.invoice !== undefined){
let data1 = data.invoice;
const _errs5 = errors;
if(errors === _errs5){
if(typeof data1 === "string"){
if(func2(data1) > 4096){
validate56.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/invoice/maxLength",keyword:"maxLength",params:{limit: 4096},message:"must NOT have more than 4096 characters"}];
return false;
}
else {
if(func2(data1) < 1){
validate56.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/invoice/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate56.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/invoice/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
var valid1 = _errs5 === errors;
}
else {
var valid1 = true;
}
if(valid1){
if(data.mint !== undefined){
const _errs7 = errors;
if(typeof data.mint !== "string"){
validate56.errors = [{instancePath:instancePath+"/mint",schemaPath:"openapi-components#/definitions/AdminPayoutRequest/properties/mint/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
var valid1 = _errs7 === errors;
}
else {
var valid1 = true;
}
}
}
}
}
}
else {
validate56.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate56.errors = vErrors;
return errors === 0;
}

exports["POST /admin/api/actions/payout/preview"] = validate57;
const schema80 = {"$ref":"openapi-components#/definitions/AdminPayoutPreviewRequest"};
const schema81 = {"type":"object","additionalProperties":false,"required":["invoice"],"properties":{"invoice":{"type":"string","minLength":1,"maxLength":4096}}};

function validate57(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){
let vErrors = null;
let errors = 0;
const _errs0 = errors;
if(errors === _errs0){
if(data && typeof data == "object" && !Array.isArray(data)){
let missing0;
if((data.invoice === undefined) && (missing0 = "invoice")){
validate57.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/required",keyword:"required",params:{missingProperty: missing0},message:"must have required property '"+missing0+"'"}];
return false;
}
else {
const _errs2 = errors;
for(const key0 in data){
if(!(key0 === "invoice")){
validate57.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties"}];
return false;
break;
}
}
if(_errs2 === errors){
if(data.invoice !== undefined){
let data0 = data.invoice;
const _errs3 = errors;
if(errors === _errs3){
if(typeof data0 === "string"){
if(func2(data0) > 4096){
validate57.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/properties/invoice/maxLength",keyword:"maxLength",params:{limit: 4096},message:"must NOT have more than 4096 characters"}];
return false;
}
else {
if(func2(data0) < 1){
validate57.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/properties/invoice/minLength",keyword:"minLength",params:{limit: 1},message:"must NOT have fewer than 1 characters"}];
return false;
}
}
}
else {
validate57.errors = [{instancePath:instancePath+"/invoice",schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/properties/invoice/type",keyword:"type",params:{type: "string"},message:"must be string"}];
return false;
}
}
}
}
}
}
else {
validate57.errors = [{instancePath,schemaPath:"openapi-components#/definitions/AdminPayoutPreviewRequest/type",keyword:"type",params:{type: "object"},message:"must be object"}];
return false;
}
}
validate57.errors = vErrors;
return errors === 0;
}

